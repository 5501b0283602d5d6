#include "cli/sweep_output.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>

#include "cli/sweep_csv.h"
#include "core/errors.h"
#include "core/output_file.h"

namespace trident {
namespace {

std::runtime_error io_error(const std::string& what, const std::string& path) {
  return std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

// The output file cannot be opened: bad input (a wrong path), exit 2.
ConfigError open_error(const std::string& path) {
  SourceLocation where;
  where.file = path;
  return ConfigError(where, std::string("cannot write: ") + std::strerror(errno));
}

ConfigError resume_error(const std::string& path, const std::string& what) {
  SourceLocation where;
  where.file = path;
  return ConfigError(where, what + "; remove it or choose another --out to start afresh");
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void sync_directory_of(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

SweepOutput::SweepOutput(const std::string& path, const std::string& header,
                         const std::vector<SweepPoint>& planned, bool resume,
                         const SweepManifest& manifest)
    : path_(path), rows_(planned.size()) {
  if (path.empty()) {
    fd_ = 1;
    write_line(header);
    return;
  }
  sync_ = true;
  // Open without truncating, lock, and only then look at or cut what is there.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw open_error(path);
  lock_fd_ = fd_;
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    SourceLocation where;
    where.file = path;
    throw ConfigError(where,
                      "another trident sweep is writing this file (it holds its lock); wait for "
                      "it to finish or choose another --out");
  }
  struct stat st {};
  const bool regular = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
  SweepFileContent old;
  if (resume && regular && st.st_size > 0) {
    old = parse_sweep_file(read_all(path), path);
    if (!old.header.empty()) {
      if (old.header != header) {
        throw resume_error(path,
                           "its header differs from this sweep's (other varied keys or "
                           "another trident version)");
      }
      if (const std::optional<SweepManifest> before = read_manifest(path)) {
        const std::string changed = manifest_differences(*before, manifest);
        if (!changed.empty()) {
          throw resume_error(path, "it was written with other inputs (" + changed + ")");
        }
      }
    }
  }
  if (!regular || old.header.empty()) {  // a fresh file
    if (regular && ::ftruncate(fd_, 0) != 0) throw io_error("cannot truncate", path);
    if (regular) write_file_atomically(manifest_path(path), manifest_json(manifest));
    write_line(header);
    sync_directory_of(path);
    return;
  }
  write_file_atomically(manifest_path(path), manifest_json(manifest));
  std::map<int, size_t> position_of;
  for (size_t i = 0; i < planned.size(); ++i) position_of[planned[i].index] = i;
  bool prefix = true;
  for (size_t r = 0; r < old.rows.size(); ++r) {
    const SweepFileContent::Row& row = old.rows[r];
    const auto it = position_of.find(row.index);
    if (it == position_of.end()) {
      throw resume_error(path, "it holds point " + std::to_string(row.index) +
                                   ", which is not in this sweep (or this shard)");
    }
    const SweepPoint& point = planned[it->second];
    for (size_t k = 0; k < point.values.size(); ++k) {
      if (row.fields[k + 1] != point.values[k]) {
        throw resume_error(path, "its point " + std::to_string(row.index) + " has " +
                                     row.fields[k + 1] + " where this sweep has " +
                                     point.values[k]);
      }
    }
    if (!rows_[it->second].empty()) {
      throw resume_error(path, "it holds point " + std::to_string(row.index) + " twice");
    }
    if (row.interrupted()) {  // run again: the row is rewritten
      prefix = false;
      continue;
    }
    rows_[it->second] = row.line;
    prefix = prefix && it->second == r;
    ++resumed_;
  }
  if (prefix) {
    // Keep the file; cut a torn last line and append after the complete rows.
    if (::ftruncate(fd_, static_cast<off_t>(old.complete_bytes)) != 0 ||
        ::lseek(fd_, static_cast<off_t>(old.complete_bytes), SEEK_SET) < 0) {
      throw io_error("cannot truncate", path);
    }
    next_ = old.rows.size();
  } else {
    // A short temporary name beside the file (the file's own may be as long as allowed).
    std::filesystem::path dir = std::filesystem::path(path).parent_path();
    if (dir.empty()) dir = ".";
    std::string pattern = (dir / ".trident-sweep-XXXXXX").string();
    fd_ = ::mkstemp(pattern.data());
    if (fd_ < 0) throw open_error(pattern);
    ::fcntl(fd_, F_SETFD, FD_CLOEXEC);
    ::fchmod(fd_, st.st_mode & 07777);
    tmp_path_ = pattern;
    write_line(header);
  }
  flush_ready();
}

SweepOutput::~SweepOutput() {
  if (fd_ > 2) ::close(fd_);
  if (lock_fd_ >= 0 && lock_fd_ != fd_) ::close(lock_fd_);
  if (!tmp_path_.empty()) ::unlink(tmp_path_.c_str());
}

void SweepOutput::write_line(const std::string& line) {
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw io_error("cannot write", stream_name());
    done += static_cast<size_t>(n);
  }
  // EINVAL: a pipe or terminal given as --out, which cannot be synced (nor resumed).
  if (sync_ && ::fsync(fd_) != 0 && errno != EINVAL) throw io_error("cannot sync", stream_name());
}

std::string SweepOutput::stream_name() const {
  if (path_.empty()) return "standard output";
  return tmp_path_.empty() ? path_ : tmp_path_;
}

void SweepOutput::flush_ready() {
  while (next_ < rows_.size() && !rows_[next_].empty()) {
    write_line(rows_[next_]);
    ++next_;
  }
}

void SweepOutput::add(size_t position, const std::string& line) {
  rows_.at(position) = line;
  flush_ready();
}

void SweepOutput::finish() {
  if (next_ != rows_.size()) throw std::logic_error("SweepOutput::finish: rows missing");
  if (tmp_path_.empty()) return;
  ::close(fd_);
  fd_ = lock_fd_;  // still locked until the rename is done
  if (::rename(tmp_path_.c_str(), path_.c_str()) != 0) throw io_error("cannot rename", tmp_path_);
  sync_directory_of(path_);
  tmp_path_.clear();
}

}  // namespace trident
