// A small process pool: runs commands as child processes (fork + exec), several at a time,
// capturing each one's stdout and stderr. Sweeps and comparisons run one simulation per child,
// since SimGrid allows one simulation per process.
#ifndef TRIDENT_CLI_CHILD_RUNNER_H_
#define TRIDENT_CLI_CHILD_RUNNER_H_

#include <functional>
#include <string>
#include <vector>

namespace trident {

struct ChildResult {
  int exit_code = -1;            // the exit status when the child exited, else -1
  int signal = 0;                // the signal that killed it, else 0
  std::string out;               // everything it wrote to stdout
  std::string err;               // everything it wrote to stderr
  double timed_out_after_s = 0;  // > 0: killed when it ran past this time limit

  bool ok() const { return exit_code == 0; }
  // Whether it failed for a reason outside its input: killed by a time limit or by a signal
  // sent from outside (SIGKILL from the OOM killer or an admin, SIGTERM, SIGINT, SIGHUP), as
  // opposed to exiting with an error or crashing (SIGSEGV, SIGABRT), which its input would
  // repeat.
  bool interrupted() const;
  // For a failed child: "timed out after N s" or "killed by signal N" when interrupted(); else
  // its last non-empty stderr line (without a leading "trident: "), or "killed by signal N" /
  // "exited with status N" when it printed nothing.
  std::string failure() const;
};

// Runs `commands` (each an argv whose first element is the executable's path), at most
// `parallel` (>= 1) at a time, starting them in order. Each child reads /dev/null and is killed
// when this process dies. Calls `on_done(i, result)` in this process when command i has
// finished (in finishing order), and `on_tick()` at least every `tick_ms` milliseconds while
// children run (progress display); either may be empty. If a callback throws, the running
// children are killed and reaped before the exception leaves.
// With `timeout_s` > 0, a child running longer is killed (SIGKILL) and finishes with
// timed_out_after_s set. Throws std::runtime_error when a pipe or process cannot be created. A
// command that cannot be executed finishes with exit status 127 and the reason on its stderr.
void run_children(const std::vector<std::vector<std::string>>& commands, int parallel,
                  const std::function<void(size_t, const ChildResult&)>& on_done,
                  const std::function<void()>& on_tick = {}, int tick_ms = 250,
                  double timeout_s = 0);

// Path of the running executable (/proc/self/exe resolved), for running this binary's own
// commands in children. Throws std::runtime_error when it cannot be found.
std::string self_executable();

// Number of CPUs this process may run on (its affinity mask); at least 1.
int available_cpus();

// The most children run_children may run at once: 4 per available CPU, and no more than the
// open-file limit (RLIMIT_NOFILE) allows with two pipes per child and 32 descriptors spare.
// At least 1.
int max_parallel_children();

// Returns `requested` (>= 1) capped at max_parallel_children(); when capped, sets *note to a
// line saying so (else clears it).
int cap_jobs(int requested, std::string* note);

}  // namespace trident

#endif  // TRIDENT_CLI_CHILD_RUNNER_H_
