#include "config/references.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "config/hf_import.h"
#include "config/json_tree.h"
#include "config/limits.h"
#include "core/input_files.h"

namespace trident {

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
  const std::string path = (hf ? "hf:" : "") + full.string();
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
