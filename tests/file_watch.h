// Waits for a file to reach a state without polling on a timer: the test sleeps in inotify
// until the file's directory changes, then looks again, so how long it waits depends on what
// the watched process writes, not on the load of the machine.
#ifndef TRIDENT_TESTS_FILE_WATCH_H_
#define TRIDENT_TESTS_FILE_WATCH_H_

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "cli_runner.h"

namespace trident::testing {

// Returns true once `ready(content of path)` holds, false when `limit` passes first (a safety
// net for a process that died: a live one wakes the wait on every write). The directory is
// watched, not the file, so a file created later or replaced by a rename is seen too; the
// state is read again after the watch is in place, so no write between them is missed.
template <typename Ready>
bool wait_for_file(const std::string& path, Ready&& ready,
                   std::chrono::seconds limit = std::chrono::seconds(120)) {
  const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return false;
  const std::string dir = std::filesystem::path(path).parent_path().string();
  ::inotify_add_watch(fd, dir.empty() ? "." : dir.c_str(),
                      IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_MOVED_TO);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  bool done = ready(read_file(path));
  while (!done) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) > 0) {
      char events[4096];
      while (::read(fd, events, sizeof events) > 0) {
      }
    }
    done = ready(read_file(path));
  }
  ::close(fd);
  return done;
}

}  // namespace trident::testing

#endif  // TRIDENT_TESTS_FILE_WATCH_H_
