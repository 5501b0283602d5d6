// The configuration files this process has read, with their identity (device and inode) and a
// hash of their content: outputs are checked against them (an output must not overwrite an
// input) and a resumed sweep compares their hashes with the ones it recorded.
#ifndef TRIDENT_CORE_INPUT_FILES_H_
#define TRIDENT_CORE_INPUT_FILES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trident {

struct InputFile {
  std::string path;  // as it was opened
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::uint64_t content_hash = 0;  // fnv1a64 of the bytes read
};

// Returns the 64-bit FNV-1a hash of `data`, continuing from `seed`.
std::uint64_t fnv1a64(const std::string& data, std::uint64_t seed = 14695981039346656037ull);

// Records that `path` (identified by `device`, `inode`) was read with content `content`; a
// path read again replaces its earlier record.
void record_input_file(const std::string& path, std::uint64_t device, std::uint64_t inode,
                       const std::string& content);

// Returns every file recorded so far, in the order first read.
std::vector<InputFile> recorded_input_files();

// Returns why `path` cannot name a file at all, or "" when it can: a component longer than
// the file system's NAME_MAX (pathconf of the directory it is in, 255 when that is unknown),
// or the whole longer than PATH_MAX. The system would say only "File name too long".
std::string path_length_problem(const std::string& path);

// Returns whether `a` and `b` name the same existing file (same device and inode).
bool same_file(const std::string& a, const std::string& b);

// Returns the recorded input that `path` (symlinks followed) is, or nothing when none.
std::optional<InputFile> input_file_at(const std::string& path);

}  // namespace trident

#endif  // TRIDENT_CORE_INPUT_FILES_H_
