// Output files written after a run succeeds: checked before the run (so a bad path fails fast)
// and written whole or not at all (a temporary file in the same directory, then renamed).
#ifndef TRIDENT_CORE_OUTPUT_FILE_H_
#define TRIDENT_CORE_OUTPUT_FILE_H_

#include <string>

namespace trident {

// Returns why `path` cannot be written (its directory is missing or not writable, or it is a
// directory), or an empty string if it can.
std::string output_path_problem(const std::string& path);

// Writes `content` to `path` atomically: readers see the old file or the whole new one, never
// a part. Throws std::runtime_error naming the path on failure (leaving no temporary behind).
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace trident

#endif  // TRIDENT_CORE_OUTPUT_FILE_H_
