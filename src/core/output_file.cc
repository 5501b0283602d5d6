#include "core/output_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
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

// The temporaries in progress, for the signal handler: fixed slots (no allocation in the
// handler), each owned by the process that made it (a forked child must not remove its
// parent's).
struct TempSlot {
  std::atomic<int> used{0};
  pid_t owner = 0;
  char path[PATH_MAX] = {};
};
constexpr int kTempSlots = 16;
TempSlot temp_slots[kTempSlots];

void remove_temporaries_and_reraise(int sig) {
  const pid_t self = ::getpid();
  for (TempSlot& slot : temp_slots) {
    if (slot.used.load() == 1 && slot.owner == self) ::unlink(slot.path);
  }
  // SA_RESETHAND restored the default action; SA_NODEFER lets it act now.
  ::raise(sig);
}

// Installs the handler for each of SIGINT, SIGTERM and SIGHUP whose action is the default,
// and ignores SIGXFSZ where default; checked at every temporary, since the program (or a
// forked child) may have changed an action since the last one.
void install_signal_handlers() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    // Only a default action is replaced: an ignored signal (nohup) or a handler of the
    // embedding program (Python's SIGINT) stays.
    if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL ||
        (old.sa_flags & SA_SIGINFO)) {
      continue;
    }
    struct sigaction act {};
    act.sa_handler = remove_temporaries_and_reraise;
    sigemptyset(&act.sa_mask);
    act.sa_flags = SA_RESETHAND | SA_NODEFER;
    ::sigaction(sig, &act, nullptr);
  }
  struct sigaction old {};
  if (::sigaction(SIGXFSZ, nullptr, &old) == 0 && old.sa_handler == SIG_DFL &&
      !(old.sa_flags & SA_SIGINFO)) {
    ::signal(SIGXFSZ, SIG_IGN);
  }
}

// Returns the slot now holding `path` (-1 when all are taken: then a signal leaves it).
int register_temporary(const std::string& path) {
  if (path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kTempSlots; ++i) {
    int expected = 0;
    if (!temp_slots[i].used.compare_exchange_strong(expected, 2)) continue;  // 2: being filled
    temp_slots[i].owner = ::getpid();
    std::memcpy(temp_slots[i].path, path.c_str(), path.size() + 1);
    temp_slots[i].used.store(1);
    return i;
  }
  return -1;
}

void unregister_temporary(int slot) {
  if (slot >= 0) temp_slots[slot].used.store(0);
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

bool same_output_file(const std::string& a, const std::string& b) {
  const std::string ta = output_target(a), tb = output_target(b);
  if (written_in_place(ta) || written_in_place(tb)) return false;
  struct stat sa {
  }, sb{};
  if (::stat(ta.c_str(), &sa) == 0 && ::stat(tb.c_str(), &sb) == 0) {
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  }
  // One does not exist yet: compare the files they would create, every link resolved.
  std::error_code ea, eb;
  const fs::path ca = fs::weakly_canonical(fs::absolute(ta, ea), ea);
  const fs::path cb = fs::weakly_canonical(fs::absolute(tb, eb), eb);
  if (ea || eb) return fs::path(ta).lexically_normal() == fs::path(tb).lexically_normal();
  return ca.lexically_normal() == cb.lexically_normal();
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
  // Created and registered with the signals blocked: no moment leaves it behind a signal.
  install_signal_handlers();
  sigset_t block, before;
  sigemptyset(&block);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&block, sig);
  ::pthread_sigmask(SIG_BLOCK, &block, &before);
  fd_ = ::mkstemp(name.data());
  const int saved_errno = errno;
  if (fd_ >= 0) {
    tmp_ = name.data();
    slot_ = register_temporary(tmp_);
  }
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  errno = saved_errno;
  if (fd_ < 0) fail("create a temporary file in its directory");
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
  unregister_temporary(slot_);
}

void AtomicOutputFile::fail(const std::string& what) {
  const std::string reason = std::strerror(errno);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  tmp_.clear();
  unregister_temporary(slot_);
  slot_ = -1;
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
  unregister_temporary(slot_);
  slot_ = -1;
}

void write_file_atomically(const std::string& path, const std::string& content) {
  AtomicOutputFile out(path);
  out.write(content);
  out.commit();
}

}  // namespace trident
