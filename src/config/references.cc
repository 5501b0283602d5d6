#include "config/references.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "config/did_you_mean.h"
#include "config/hf_import.h"
#include "config/json_tree.h"
#include "config/limits.h"
#include "core/input_files.h"
#include "core/program_location.h"

namespace trident {
namespace {

namespace fs = std::filesystem;

// The library's folder for files of `kind`.
const char* kind_folder(ConfigFileKind kind) {
  switch (kind) {
    case ConfigFileKind::kScenario:
      return "scenarios";
    case ConfigFileKind::kCluster:
      return "clusters";
    case ConfigFileKind::kGpu:
      return "gpus";
    case ConfigFileKind::kModel:
      return "models";
    case ConfigFileKind::kPlan:
      return "plans";
    case ConfigFileKind::kStack:
      return "stacks";
  }
  return "";
}

bool regular_file_at(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

bool directory_at(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

// The folders of directory `dir` that hold `kind` files: D/clusters and D/configs/clusters.
std::vector<fs::path> kind_directories(const std::string& dir, ConfigFileKind kind) {
  return {fs::path(dir) / kind_folder(kind), fs::path(dir) / "configs" / kind_folder(kind)};
}

std::string strip_yaml_ending(const std::string& name) {
  for (const char* ending : {".yaml", ".yml"}) {
    const std::string e = ending;
    if (name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0) {
      return name.substr(0, name.size() - e.size());
    }
  }
  return name;
}

// "no cluster `x` in the library (did you mean `y`?; searched: a, b)".
std::string unknown_name_message(const std::string& name,
                                 const std::vector<ConfigFileKind>& kinds) {
  std::vector<std::string> names;
  std::string what;
  for (ConfigFileKind kind : kinds) {
    what += (what.empty() ? "" : " or ") + std::string(config_file_kind_name(kind));
    for (const LibraryEntry& e : library_entries(kind)) names.push_back(e.name);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  const std::vector<std::string> dirs = library_directories();
  std::string message =
      "`" + excerpt(name, 200) + "` is neither a file nor a " + what + " in the library";
  if (!names.empty()) message += " (" + suggestion(name, names) + ")";
  message += dirs.empty() ? "; no library directory found (set TRIDENT_PATH)"
                          : "; searched " + join_names(dirs);
  return message;
}

}  // namespace

bool is_library_name(const std::string& text) {
  if (text.empty() || text.find('/') != std::string::npos || is_hf_reference(text)) return false;
  for (const char* ending : {".yaml", ".yml", ".json"}) {
    const std::string e = ending;
    if (text.size() >= e.size() && text.compare(text.size() - e.size(), e.size(), e) == 0) {
      return false;
    }
  }
  return true;
}

std::vector<std::string> library_directories() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("TRIDENT_PATH")) {
    const std::string list = env;
    size_t start = 0;
    while (start <= list.size()) {
      const size_t colon = std::min(list.find(':', start), list.size());
      if (colon > start) candidates.push_back(list.substr(start, colon - start));
      start = colon + 1;
    }
  }
  // The installed library: next to the running program (bin/../share/trident, or for the
  // Python module lib/python3/dist-packages/trident/../../../../share/trident), wherever the
  // prefix was moved, then where CMake was told it would be installed.
  const fs::path module = program_module_path();
  if (!module.empty()) {
    const fs::path dir = module.parent_path();
    candidates.push_back((dir.parent_path() / "share/trident").string());
    if (dir.filename() == "trident" && dir.parent_path().filename() == "dist-packages") {
      const fs::path prefix = dir.parent_path().parent_path().parent_path().parent_path();
      candidates.push_back((prefix / "share/trident").string());
    }
  }
#ifdef TRIDENT_DATA_DIR
  candidates.push_back(TRIDENT_DATA_DIR);
#endif
#ifdef TRIDENT_LIBRARY_SOURCE_DIR
  // Only from the build tree: an installed trident must not read a checkout.
  if (running_in_build_tree()) candidates.push_back(TRIDENT_LIBRARY_SOURCE_DIR);
#endif
  std::vector<std::string> dirs;
  for (const std::string& c : candidates) {
    if (!directory_at(c)) continue;
    const std::string normal = fs::path(c).lexically_normal().string();
    if (std::find(dirs.begin(), dirs.end(), normal) == dirs.end()) dirs.push_back(normal);
  }
  return dirs;
}

std::vector<LibraryEntry> library_entries(ConfigFileKind kind) {
  std::map<std::string, std::string> found;
  for (const std::string& dir : library_directories()) {
    for (const fs::path& folder : kind_directories(dir, kind)) {
      if (!directory_at(folder)) continue;
      std::error_code ec;
      for (const fs::directory_entry& e : fs::directory_iterator(folder, ec)) {
        const std::string file = e.path().filename().string();
        const std::string name = strip_yaml_ending(file);
        if (name == file || !regular_file_at(e.path())) continue;
        found.emplace(name, e.path().string());  // keeps the first in search order
      }
    }
  }
  std::vector<LibraryEntry> out;
  for (const auto& [name, path] : found) out.push_back({name, path});
  return out;
}

std::string find_library_file(const std::string& name, ConfigFileKind kind) {
  if (name.empty() || name.find('/') != std::string::npos) return "";
  const std::string base = strip_yaml_ending(name);
  for (const std::string& dir : library_directories()) {
    for (const fs::path& folder : kind_directories(dir, kind)) {
      for (const char* ending : {".yaml", ".yml"}) {
        const fs::path candidate = folder / (base + ending);
        if (regular_file_at(candidate)) return candidate.string();
      }
    }
  }
  return "";
}

std::string resolve_file_argument(const std::string& argument,
                                  const std::vector<ConfigFileKind>& kinds) {
  if (!is_library_name(argument) || fs::exists(argument)) return argument;
  for (ConfigFileKind kind : kinds) {
    const std::string path = find_library_file(argument, kind);
    if (!path.empty()) return path;
  }
  SourceLocation where;
  where.file = argument;
  throw ConfigError(where, unknown_name_message(argument, kinds));
}

namespace {

// What a FIFO or socket is, for messages.
const char* file_type_name(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO or pipe (it would wait for a writer)";
  return "a socket";
}

}  // namespace

std::string read_input_file(const std::string& path) {
  SourceLocation where;
  where.file = path;
  const std::string limit = std::to_string(limits::kMaxInputBytes >> 20) + " MiB";
  // O_NONBLOCK: opening a FIFO without a writer must not block; FIFOs and sockets are refused.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    const std::string reason = std::strerror(errno);
    if (fd >= 0) ::close(fd);
    throw ConfigError(where, "cannot open file: " + reason);
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  if (S_ISDIR(st.st_mode)) {
    throw ConfigError(where, "cannot open file: it is a directory (expected a YAML or JSON file)");
  }
  if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
    throw ConfigError(where, std::string("cannot read file: it is ") + file_type_name(st.st_mode) +
                                 " (expected a YAML or JSON file)");
  }
  // A device is read (bounded: /dev/zero stops at the limit) with blocking reads again.
  if (!S_ISREG(st.st_mode)) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  if (S_ISREG(st.st_mode) && st.st_size > limits::kMaxInputBytes) {
    throw ConfigError(where, "file is " + std::to_string(st.st_size) +
                                 " bytes, more than the limit of " + limit +
                                 " for a configuration file");
  }
  // Bounded read: a device has no size to check beforehand, a file may grow.
  std::string text;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw ConfigError(where, std::string("cannot read file: ") + std::strerror(errno));
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (static_cast<std::int64_t>(text.size()) > limits::kMaxInputBytes) {
      throw ConfigError(where,
                        "file is larger than the limit of " + limit + " for a configuration file");
    }
  }
  record_input_file(path, static_cast<std::uint64_t>(st.st_dev),
                    static_cast<std::uint64_t>(st.st_ino), text);
  return text;
}

std::string base_directory(const YamlMark& mark) {
  if (mark.line == 0) return "";
  return std::filesystem::path(mark.file).parent_path().string();
}

YamlNodePtr load_config_map(const std::string& path, ConfigFileKind kind, Diagnostics* diag) {
  const bool hf = kind == ConfigFileKind::kModel && is_hf_reference(path);
  std::string file = hf ? hf_reference_path(path) : path;
  std::error_code ec;
  if (hf && std::filesystem::is_directory(file, ec)) {
    file = (std::filesystem::path(file) / "config.json").string();
  }
  const std::string text = read_input_file(file);
  const bool json = file.size() >= 5 && file.compare(file.size() - 5, 5, ".json") == 0;
  YamlNodePtr root = json ? parse_json(text, file, diag) : parse_yaml(text, file, diag);
  if (!root->is_map()) {
    YamlMark m = root->mark;
    if (m.line == 0) m.line = 1, m.column = 1;
    throw ConfigError(location_of(m, ""), std::string("expected a map of ") +
                                              config_file_kind_name(kind) + " settings, got " +
                                              root->describe());
  }
  if (kind == ConfigFileKind::kModel && json) {
    return model_map_from_hf(*root, hf_model_name(file), diag);
  }
  if (kind == ConfigFileKind::kCluster && root->find("gpu") != nullptr) {
    resolve_reference(*root, "gpu", "cluster.gpu", ConfigFileKind::kGpu, diag);
  }
  if (kind == ConfigFileKind::kPlan && root->find("stack") != nullptr) {
    resolve_reference(*root, "stack", "plan.stack", ConfigFileKind::kStack, diag);
  }
  return root;
}

void resolve_reference(YamlNode& parent, const std::string& key, const std::string& key_path,
                       ConfigFileKind kind, Diagnostics* diag) {
  YamlEntry* entry = parent.find(key);
  if (entry == nullptr) return;
  const YamlNode& value = *entry->value;
  if (value.is_map() || value.is_null()) return;
  if (!value.is_scalar()) {
    throw ConfigError(location_of(value.mark, key_path),
                      "expected a path to a YAML file or an inline map, got " + value.describe());
  }
  const std::string reference = value.scalar;
  const bool hf = kind == ConfigFileKind::kModel && is_hf_reference(reference);
  const std::filesystem::path ref(hf ? hf_reference_path(reference) : reference);
  const std::filesystem::path full =
      ref.is_absolute()
          ? ref
          : (std::filesystem::path(base_directory(value.mark)) / ref).lexically_normal();
  std::string path = (hf ? "hf:" : "") + full.string();
  std::error_code ec;
  if (!hf && is_library_name(reference) && !std::filesystem::exists(full, ec)) {
    path = find_library_file(reference, kind);
    if (path.empty()) {
      throw ConfigError(location_of(value.mark, key_path), unknown_name_message(reference, {kind}));
    }
  }
  YamlNodePtr loaded;
  try {
    loaded = load_config_map(path, kind, diag);
  } catch (const ConfigError& e) {
    if (e.where().line > 0) throw;
    // The file itself is unreadable: point at the reference.
    throw ConfigError(location_of(value.mark, key_path),
                      "cannot read `" + excerpt(reference, 200) + "`" +
                          (full.string() != ref.string() ? " (" + full.string() + ")" : "") + ": " +
                          e.message());
  }
  entry->value = loaded;
}

}  // namespace trident
