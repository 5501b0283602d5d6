// Output files written after a run succeeds: checked before the run (so a bad path fails fast)
// and written whole or not at all (a temporary file in the same directory, then renamed).
// Only a regular file (or a new path) is replaced by rename: a symlink is followed to the file
// it names, and a device, FIFO or socket (/dev/null, /dev/stdout) is written in place.
#ifndef TRIDENT_CORE_OUTPUT_FILE_H_
#define TRIDENT_CORE_OUTPUT_FILE_H_

#include <string>

namespace trident {

// Returns the path that writing to `path` changes: `path` with its symlinks followed (a
// dangling one to the file it would create). Returns `path` itself when it is no symlink.
std::string output_target(const std::string& path);

// Returns whether writing `a` and writing `b` would change one regular file: the same name,
// names that symlinks (of the file or of a directory on the way) or hard links lead to one
// file, existing or not. A device, FIFO or socket (/dev/null) can take both: false.
bool same_output_file(const std::string& a, const std::string& b);

// Returns why `path` cannot be written (its directory is missing or not writable, it is a
// directory, its name is longer than the file system allows, a device that is not writable),
// or an empty string if it can.
std::string output_path_problem(const std::string& path);

// Writes `content` to `path` atomically: readers see the old file or the whole new one, never
// a part (devices and FIFOs, which cannot be renamed over, are written in place). Throws
// std::runtime_error naming the path on failure (leaving no temporary behind).
void write_file_atomically(const std::string& path, const std::string& content);

// Streams a file written piece by piece with the same guarantees as write_file_atomically:
// the pieces go to a temporary file renamed over `path` by commit(), or straight to a device.
// Destroyed without commit(), it removes the temporary and leaves `path` as it was.
// Interrupted, it leaves none either: while a temporary exists, SIGINT, SIGTERM and SIGHUP
// (where their action is the default) remove it before the signal ends the process as it
// would have, and SIGXFSZ (a file-size limit, where default) is ignored so that the write
// fails with EFBIG and the temporary is removed as on any write error.
class AtomicOutputFile {
 public:
  // Opens the temporary file. Throws std::runtime_error naming `path` when it cannot.
  explicit AtomicOutputFile(const std::string& path);
  ~AtomicOutputFile();
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;

  // Appends `data`. Throws std::runtime_error naming the path when writing fails.
  void write(const std::string& data);
  // Flushes and renames into place. Throws std::runtime_error on failure.
  void commit();

 private:
  [[noreturn]] void fail(const std::string& what);
  // Writes all of buffer_ to the temporary file and empties it; fails on a write error.
  void flush_buffer();

  std::string path_;    // as given, for messages
  std::string target_;  // symlinks followed
  std::string tmp_;     // "" when writing in place
  int slot_ = -1;       // its entry in the signal handler's list of temporaries, or -1
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace trident

#endif  // TRIDENT_CORE_OUTPUT_FILE_H_
