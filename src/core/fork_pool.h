// Runs functions in forked child processes, several at a time, each returning a string to
// the parent. SimGrid allows one simulation per process; `trident plan` simulates each
// candidate in a child forked from the process that already holds the loaded specs (no exec,
// no re-reading of files).
#ifndef TRIDENT_CORE_FORK_POOL_H_
#define TRIDENT_CORE_FORK_POOL_H_

#include <functional>
#include <string>

namespace trident {

struct ForkResult {
  bool ok = false;     // the child returned normally
  std::string output;  // what it returned, or why it failed (its exception, or its signal)
};

// Calls `next()` for the next task (-1: none for now; asked again whenever a child ends) and
// runs `task(i)` in a child process, at most `parallel` (>= 1) at a time; calls
// `on_done(i, result)` in this process when task i ends (in finishing order) and `on_tick()`
// about every `tick_ms` while children run. Returns when next() gives -1 and no child runs.
// If a callback throws, the running children are killed and reaped before it leaves. Throws
// std::runtime_error when a pipe or process cannot be created.
void run_forked(int parallel, const std::function<long()>& next,
                const std::function<std::string(long)>& task,
                const std::function<void(long, const ForkResult&)>& on_done,
                const std::function<void()>& on_tick = {}, int tick_ms = 250);

}  // namespace trident

#endif  // TRIDENT_CORE_FORK_POOL_H_
