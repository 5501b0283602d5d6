#include "core/input_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <mutex>

namespace trident {
namespace {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

std::vector<InputFile>& registry() {
  static std::vector<InputFile> files;
  return files;
}

}  // namespace

std::uint64_t fnv1a64(const std::string& data, std::uint64_t seed) {
  std::uint64_t h = seed;
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

void record_input_file(const std::string& path, std::uint64_t device, std::uint64_t inode,
                       const std::string& content) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  const InputFile record{path, device, inode, fnv1a64(content)};
  for (InputFile& f : registry()) {
    if (f.path == path) {  // read again (a long-lived process): keep the latest, bounded
      f = record;
      return;
    }
  }
  registry().push_back(record);
}

std::vector<InputFile> recorded_input_files() {
  std::lock_guard<std::mutex> lock(registry_mutex());
  return registry();
}

std::string path_length_problem(const std::string& path) {
  if (path.size() >= PATH_MAX) {
    return "the path is " + std::to_string(path.size()) + " bytes, longer than the " +
           std::to_string(PATH_MAX - 1) + " the system allows";
  }
  size_t start = 0;
  while (start < path.size()) {
    const size_t slash = std::min(path.find('/', start), path.size());
    const size_t length = slash - start;
    if (length > 0) {
      // The directory holding the component decides (a mounted file system may allow less).
      const std::string dir = start == 0 ? "." : path.substr(0, start);
      long name_max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
      if (name_max <= 0) name_max = NAME_MAX;
      if (static_cast<long>(length) > name_max) {
        return "a name in the path is " + std::to_string(length) + " bytes, longer than the " +
               std::to_string(name_max) + " the file system allows";
      }
    }
    start = slash + 1;
  }
  return "";
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

std::optional<InputFile> input_file_at(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  std::lock_guard<std::mutex> lock(registry_mutex());
  for (const InputFile& f : registry()) {
    if (f.device == static_cast<std::uint64_t>(st.st_dev) &&
        f.inode == static_cast<std::uint64_t>(st.st_ino)) {
      return f;
    }
  }
  return std::nullopt;
}

}  // namespace trident
