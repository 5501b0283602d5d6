#include "core/program_location.h"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace trident {
namespace {

namespace fs = std::filesystem;

// A function of this file: its address lies in the mapping of the module holding trident.
void anchor() {}

}  // namespace

std::string program_module_path() {
  const auto address = reinterpret_cast<std::uintptr_t>(&anchor);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    // "start-end perms offset dev inode   path"
    unsigned long long start = 0, end = 0;
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx %*s %*s %*s %*s %n", &start, &end, &path_at) < 2 ||
        path_at <= 0) {
      continue;
    }
    if (address < start || address >= end) continue;
    std::string path = line.substr(static_cast<size_t>(path_at));
    // A file replaced while running is shown "PATH (deleted)": still the program's location.
    const std::string deleted = " (deleted)";
    if (path.size() > deleted.size() &&
        path.compare(path.size() - deleted.size(), deleted.size(), deleted) == 0) {
      path.resize(path.size() - deleted.size());
    }
    return !path.empty() && path[0] == '/' ? path : "";
  }
  return "";
}

bool is_inside_directory(const std::string& module, const std::string& build_dir) {
  if (module.empty() || build_dir.empty()) return false;
  std::error_code ec;
  const fs::path file = fs::canonical(module, ec);
  if (ec) return false;
  const fs::path dir = fs::canonical(build_dir, ec);
  if (ec) return false;
  // Inside: every component of the directory begins the file's path.
  auto f = file.begin();
  for (auto d = dir.begin(); d != dir.end(); ++d, ++f) {
    if (f == file.end() || *f != *d) return false;
  }
  return f != file.end();
}

bool running_in_build_tree() {
#ifdef TRIDENT_BUILD_DIR
  static const bool inside = is_inside_directory(program_module_path(), TRIDENT_BUILD_DIR);
  return inside;
#else
  return false;
#endif
}

}  // namespace trident
