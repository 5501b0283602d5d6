#include "core/output_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace trident {
namespace {

namespace fs = std::filesystem;

fs::path directory_of(const std::string& path) {
  const fs::path dir = fs::path(path).parent_path();
  return dir.empty() ? fs::path(".") : dir;
}

}  // namespace

std::string output_path_problem(const std::string& path) {
  if (path.empty()) return "empty file name";
  std::error_code ec;
  if (fs::is_directory(path, ec)) return "'" + path + "' is a directory";
  const fs::path dir = directory_of(path);
  if (!fs::is_directory(dir, ec)) return "directory '" + dir.string() + "' does not exist";
  if (::access(dir.c_str(), W_OK) != 0) return "directory '" + dir.string() + "' is not writable";
  return "";
}

void write_file_atomically(const std::string& path, const std::string& content) {
  const std::string tmp = (directory_of(path) / ("." + fs::path(path).filename().string() + ".tmp" +
                                                 std::to_string(::getpid())))
                              .string();
  auto fail = [&](const std::string& what) {
    const std::string reason = std::strerror(errno);
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot write '" + path + "': " + what + ": " + reason);
  };
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) fail("create");
  const bool written = std::fwrite(content.data(), 1, content.size(), f) == content.size();
  if (std::fclose(f) != 0 || !written) fail("write");
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("rename");
}

}  // namespace trident
