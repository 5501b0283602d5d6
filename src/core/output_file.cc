#include "core/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

namespace trident {
namespace {

namespace fs = std::filesystem;

constexpr size_t kBufferBytes = 1 << 20;

fs::path directory_of(const fs::path& path) {
  const fs::path dir = path.parent_path();
  return dir.empty() ? fs::path(".") : dir;
}

// Whether `path` names something that must be written in place (exists, not a regular file).
bool written_in_place(const std::string& target) {
  struct stat st {};
  return ::stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

long name_max(const fs::path& dir) {
  const long n = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  return n > 0 ? n : NAME_MAX;
}

}  // namespace

std::string output_target(const std::string& path) {
  fs::path p = path;
  std::error_code ec;
  for (int hops = 0; hops < 40 && fs::is_symlink(p, ec); ++hops) {
    const fs::path link = fs::read_symlink(p, ec);
    if (ec) break;
    p = link.is_absolute() ? link : directory_of(p) / link;
  }
  return p.string();
}

std::string output_path_problem(const std::string& path) {
  if (path.empty()) return "empty file name";
  const std::string target = output_target(path);
  std::error_code ec;
  if (fs::is_directory(target, ec)) return "'" + path + "' is a directory";
  if (written_in_place(target)) {
    if (::access(target.c_str(), W_OK) != 0) return "'" + path + "' is not writable";
    return "";
  }
  const fs::path dir = directory_of(target);
  if (!fs::is_directory(dir, ec)) return "directory '" + dir.string() + "' does not exist";
  const std::string name = fs::path(target).filename().string();
  if (static_cast<long>(name.size()) > name_max(dir)) {
    return "file name is " + std::to_string(name.size()) + " bytes, longer than the " +
           std::to_string(name_max(dir)) + " the file system allows";
  }
  if (::access(dir.c_str(), W_OK) != 0) return "directory '" + dir.string() + "' is not writable";
  if (fs::exists(target, ec) && ::access(target.c_str(), W_OK) != 0) {
    return "'" + path + "' is not writable";
  }
  return "";
}

AtomicOutputFile::AtomicOutputFile(const std::string& path)
    : path_(path), target_(output_target(path)) {
  if (written_in_place(target_)) {
    fd_ = ::open(target_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd_ < 0) fail("open");
    return;
  }
  // A short temporary name: the target's name may be as long as the file system allows.
  std::string pattern = (directory_of(target_) / ".trident-XXXXXX").string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  fd_ = ::mkstemp(name.data());
  if (fd_ < 0) fail("create a temporary file in its directory");
  tmp_ = name.data();
  ::fcntl(fd_, F_SETFD, FD_CLOEXEC);
  // The file gets the mode a new file would (mkstemp makes it private), or the old one's.
  struct stat st {};
  mode_t mode;
  if (::stat(target_.c_str(), &st) == 0) {
    mode = st.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  ::fchmod(fd_, mode);
}

AtomicOutputFile::~AtomicOutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

void AtomicOutputFile::fail(const std::string& what) {
  const std::string reason = std::strerror(errno);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  tmp_.clear();
  throw std::runtime_error("cannot write '" + path_ + "': " + what + ": " + reason);
}

void AtomicOutputFile::flush_buffer() {
  size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("write");
    done += static_cast<size_t>(n);
  }
  buffer_.clear();
}

void AtomicOutputFile::write(const std::string& data) {
  buffer_ += data;
  if (buffer_.size() >= kBufferBytes) flush_buffer();
}

void AtomicOutputFile::commit() {
  if (fd_ < 0) throw std::logic_error("AtomicOutputFile::commit: not open");
  flush_buffer();
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("write");
  if (tmp_.empty()) return;
  if (::rename(tmp_.c_str(), target_.c_str()) != 0) fail("rename");
  tmp_.clear();
}

void write_file_atomically(const std::string& path, const std::string& content) {
  AtomicOutputFile out(path);
  out.write(content);
  out.commit();
}

}  // namespace trident
