#include "cli/child_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace trident {
namespace {

std::runtime_error system_error(const std::string& what) {
  return std::runtime_error(what + ": " + std::strerror(errno));
}

struct Running {
  size_t index = 0;
  pid_t pid = -1;
  int out_fd = -1;
  int err_fd = -1;
  std::chrono::steady_clock::time_point started;
  bool killed = false;  // by the time limit
  ChildResult result;
};

// Kills and reaps the children still running when the pool is left early.
class Pool {
 public:
  ~Pool() {
    for (Running& r : running_) {
      if (r.out_fd >= 0) ::close(r.out_fd);
      if (r.err_fd >= 0) ::close(r.err_fd);
      ::kill(r.pid, SIGKILL);
      int status;
      while (::waitpid(r.pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
  }
  std::vector<Running>& running() { return running_; }

 private:
  std::vector<Running> running_;
};

Running start(size_t index, const std::vector<std::string>& argv_strings) {
  if (argv_strings.empty()) throw std::runtime_error("run_children: empty command");
  std::vector<char*> argv;
  for (const std::string& a : argv_strings) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw system_error("pipe");
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    throw system_error("pipe");
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
    throw system_error("fork");
  }
  if (pid == 0) {
    // Child: async-signal-safe calls only until exec.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
    const int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::execv(argv[0], argv.data());
    const char* msg = "cannot execute ";
    (void)!::write(2, msg, std::strlen(msg));
    (void)!::write(2, argv[0], std::strlen(argv[0]));
    (void)!::write(2, "\n", 1);
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  Running r;
  r.index = index;
  r.pid = pid;
  r.out_fd = out[0];
  r.err_fd = err[0];
  r.started = std::chrono::steady_clock::now();
  return r;
}

// Reads what is available on `*fd` into `sink`; closes it and sets -1 at end of file.
void drain(int* fd, std::string* sink) {
  char buf[65536];
  const ssize_t n = ::read(*fd, buf, sizeof buf);
  if (n > 0) {
    sink->append(buf, static_cast<size_t>(n));
  } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
    ::close(*fd);
    *fd = -1;
  }
}

}  // namespace

bool ChildResult::interrupted() const {
  if (timed_out_after_s > 0) return true;
  return signal == SIGKILL || signal == SIGTERM || signal == SIGINT || signal == SIGHUP;
}

std::string ChildResult::failure() const {
  if (timed_out_after_s > 0) {
    char text[64];
    std::snprintf(text, sizeof text, "timed out after %g s", timed_out_after_s);
    return text;
  }
  if (interrupted()) return "killed by signal " + std::to_string(signal);
  std::string last, line;
  for (char c : err + "\n") {
    if (c != '\n') {
      line += c;
      continue;
    }
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    if (!line.empty()) last = line;
    line.clear();
  }
  if (last.rfind("trident: ", 0) == 0) last = last.substr(9);
  if (!last.empty()) return last;
  if (signal != 0) return "killed by signal " + std::to_string(signal);
  return "exited with status " + std::to_string(exit_code);
}

void run_children(const std::vector<std::vector<std::string>>& commands, int parallel,
                  const std::function<void(size_t, const ChildResult&)>& on_done,
                  const std::function<void()>& on_tick, int tick_ms, double timeout_s) {
  if (parallel < 1) parallel = 1;
  Pool pool;
  std::vector<Running>& running = pool.running();
  size_t next = 0;
  while (next < commands.size() || !running.empty()) {
    while (next < commands.size() && running.size() < static_cast<size_t>(parallel)) {
      running.push_back(start(next, commands[next]));
      ++next;
    }
    std::vector<pollfd> fds;
    for (const Running& r : running) {
      if (r.out_fd >= 0) fds.push_back({r.out_fd, POLLIN, 0});
      if (r.err_fd >= 0) fds.push_back({r.err_fd, POLLIN, 0});
    }
    if (!fds.empty()) {
      int wait_ms = tick_ms;
      if (timeout_s > 0) {  // wake up for the first child to reach its time limit
        const auto now = std::chrono::steady_clock::now();
        for (const Running& r : running) {
          if (r.killed) continue;
          const double left = timeout_s - std::chrono::duration<double>(now - r.started).count();
          wait_ms = std::min(wait_ms, std::max(0, static_cast<int>(left * 1000) + 1));
        }
      }
      const int n = ::poll(fds.data(), fds.size(), wait_ms);
      if (n < 0 && errno != EINTR) throw system_error("poll");
      for (const pollfd& p : fds) {
        if (p.revents == 0) continue;
        for (Running& r : running) {
          if (r.out_fd == p.fd) drain(&r.out_fd, &r.result.out);
          if (r.err_fd == p.fd) drain(&r.err_fd, &r.result.err);
        }
      }
    }
    if (timeout_s > 0) {
      const auto now = std::chrono::steady_clock::now();
      for (Running& r : running) {
        if (r.killed || std::chrono::duration<double>(now - r.started).count() <= timeout_s) {
          continue;
        }
        ::kill(r.pid, SIGKILL);  // its pipes then close and it is reaped below
        r.killed = true;
      }
    }
    // Reap the children whose output has ended, in start order.
    for (size_t k = 0; k < running.size();) {
      Running& r = running[k];
      if (r.out_fd >= 0 || r.err_fd >= 0) {
        ++k;
        continue;
      }
      int status = 0;
      while (::waitpid(r.pid, &status, 0) < 0 && errno == EINTR) {
      }
      if (WIFEXITED(status)) r.result.exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) r.result.signal = WTERMSIG(status);
      // Killed by the time limit, unless it had exited already.
      if (r.killed && r.result.signal == SIGKILL) r.result.timed_out_after_s = timeout_s;
      const size_t index = r.index;
      const ChildResult result = std::move(r.result);
      running.erase(running.begin() + static_cast<long>(k));
      if (on_done) on_done(index, result);
    }
    if (on_tick) on_tick();
  }
}

std::string self_executable() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw system_error("cannot find this program's path (/proc/self/exe)");
  return std::string(buf, static_cast<size_t>(n));
}

int available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

int max_parallel_children() {
  int cap = 4 * available_cpus();
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    const long spare = static_cast<long>(limit.rlim_cur) - 32;
    cap = static_cast<int>(std::min<long>(cap, spare / 2));
  }
  return std::max(1, cap);
}

int cap_jobs(int requested, std::string* note) {
  const int cap = max_parallel_children();
  note->clear();
  if (requested <= cap) return requested;
  *note = "--jobs " + std::to_string(requested) + " capped at " + std::to_string(cap) +
          " (4 per CPU, 2 open files per job within the open-file limit)";
  return cap;
}

}  // namespace trident
