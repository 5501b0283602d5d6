#include "core/fork_pool.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

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

struct Running {
  long task = 0;
  pid_t pid = 0;
  int fd = -1;
  std::string data;
};

ForkResult finish(Running* r) {
  ::close(r->fd);
  int status = 0;
  while (::waitpid(r->pid, &status, 0) < 0 && errno == EINTR) {
  }
  ForkResult out;
  if (r->data.rfind("OK", 0) == 0) {
    out.ok = true;
    out.output = r->data.substr(2);
  } else if (r->data.rfind("ER", 0) == 0) {
    out.output = r->data.substr(2);
  } else {
    out.output = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                     : "the child process died";
  }
  return out;
}

}  // namespace

void run_forked(int parallel, const std::function<long()>& next,
                const std::function<std::string(long)>& task,
                const std::function<void(long, const ForkResult&)>& on_done,
                const std::function<void()>& on_tick, int tick_ms) {
  std::vector<Running> running;
  auto kill_all = [&] {
    for (Running& r : running) {
      ::kill(r.pid, SIGKILL);
      finish(&r);
    }
    running.clear();
  };
  auto spawn = [&](long i) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
      ::close(fds[0]);
      for (const Running& r : running) ::close(r.fd);
      std::string out;
      try {
        out = "OK" + task(i);
      } catch (const std::exception& e) {
        out = std::string("ER") + e.what();
      }
      write_all(fds[1], out);
      ::close(fds[1]);
      ::_exit(0);  // no destructors or atexit handlers of the parent in the child
    }
    ::close(fds[1]);
    running.push_back({i, pid, fds[0], {}});
  };
  try {
    for (;;) {
      while (static_cast<int>(running.size()) < parallel) {
        const long i = next();
        if (i < 0) break;
        spawn(i);
      }
      if (running.empty()) return;
      std::vector<pollfd> polls;
      for (const Running& r : running) polls.push_back({r.fd, POLLIN, 0});
      const int n = ::poll(polls.data(), polls.size(), tick_ms);
      if (n < 0 && errno != EINTR) {
        throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
      }
      if (on_tick) on_tick();
      for (size_t k = polls.size(); k-- > 0;) {
        if (!(polls[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        char buf[65536];
        const ssize_t got = ::read(running[k].fd, buf, sizeof buf);
        if (got < 0 && errno == EINTR) continue;
        if (got > 0) {
          running[k].data.append(buf, static_cast<size_t>(got));
          continue;
        }
        Running done = running[k];
        running.erase(running.begin() + static_cast<long>(k));
        const ForkResult result = finish(&done);
        on_done(done.task, result);
      }
    }
  } catch (...) {
    kill_all();
    throw;
  }
}

}  // namespace trident
