#include "core/isolated_run.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "core/errors.h"

namespace trident {
namespace {

void write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

std::string run_isolated(const std::function<std::string()>& fn) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    int code = 0;
    std::string out;
    try {
      out = "OK" + fn();
    } catch (const ConfigError& e) {
      out = std::string("ERConfigError: ") + e.what();
      code = 2;
    } catch (const std::exception& e) {
      out = std::string("ER") + e.what();
      code = 1;
    }
    write_all(fds[1], out);
    ::close(fds[1]);
    ::_exit(code);  // the child must not run the parent's destructors or test framework
  }
  ::close(fds[1]);
  std::string result;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (result.rfind("OK", 0) == 0) return result.substr(2);
  if (result.rfind("ER", 0) == 0) throw std::runtime_error(result.substr(2));
  throw std::runtime_error(
      "simulation process died" +
      (WIFSIGNALED(status) ? " on signal " + std::to_string(WTERMSIG(status)) : std::string()));
}

}  // namespace trident
