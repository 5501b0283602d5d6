// Settings given as file paths or library names: a scenario's `cluster:`, `model:` and
// `plan:` (YAML files; a model also as a Hugging Face config.json, `hf:path` or any `.json`
// path), and a cluster's `gpu:`. A path is relative to the file it is written in; one from
// `--set` is relative to the working directory. A name (no `/`, no .yaml/.yml/.json ending,
// e.g. `dgx-h100`) that is not such a file is looked up in the library: each directory of
// TRIDENT_PATH (colon-separated), then the installed library (<prefix>/share/trident), then
// the source tree's (only for a program still in its build tree, core/program_location.h). A
// library directory D holds D/clusters/NAME.yaml (or D/configs/clusters/NAME.yaml), likewise
// models/, gpus/, plans/, stacks/ and scenarios/.
#ifndef TRIDENT_CONFIG_REFERENCES_H_
#define TRIDENT_CONFIG_REFERENCES_H_

#include <string>
#include <vector>

#include "config/diagnostics.h"
#include "config/scenario.h"
#include "config/yaml_tree.h"

namespace trident {

// Returns the contents of the file at `path` and records it (core/input_files.h). Throws
// ConfigError naming `path` (as the user wrote it) when it cannot be read, is a directory, is
// a FIFO or socket (which would block forever), or is larger than limits::kMaxInputBytes
// (checked before reading, and while reading devices).
std::string read_input_file(const std::string& path);

// Reads the file at `path` (as the user wrote it; a model's may carry "hf:" and name a
// directory holding config.json) and returns its root, which must be a map of `kind`
// settings: YAML, or for a model a Hugging Face config.json (converted by hf_import.h). A
// cluster's `gpu:` path is resolved too. Duplicate keys are recorded in `diag` when given;
// anything else that is wrong throws ConfigError naming the file.
YamlNodePtr load_config_map(const std::string& path, ConfigFileKind kind, Diagnostics* diag);

// Replaces the value of `key` in the map `parent` by the map read from the file it names,
// when it is a path; leaves a map alone. `kind` is what that file holds; `key_path` names
// the setting in messages ("cluster", "cluster.gpu"). When the file cannot be read at all
// the error points at the reference; errors inside the file point into it.
void resolve_reference(YamlNode& parent, const std::string& key, const std::string& key_path,
                       ConfigFileKind kind, Diagnostics* diag);

// Returns the directory relative to which a path written at `mark` is read: the directory
// of the file the mark is in, or "" (the working directory) for --set values.
std::string base_directory(const YamlMark& mark);

// Whether `text` is written as a library name rather than a path: no '/', not `hf:`, and no
// .yaml/.yml/.json ending.
bool is_library_name(const std::string& text);

// The library directories searched for names, in order (those that exist): TRIDENT_PATH's,
// the installed library's, the source tree's.
std::vector<std::string> library_directories();

// One file of the library: its name (file name without .yaml) and path.
struct LibraryEntry {
  std::string name;
  std::string path;
};

// Every `kind` file of the library, sorted by name; where a name is in several directories,
// the first in search order wins.
std::vector<LibraryEntry> library_entries(ConfigFileKind kind);

// Returns the path of the `kind` file called `name` in the library, or "" when there is none.
std::string find_library_file(const std::string& name, ConfigFileKind kind);

// Returns the file a command-line argument names: `argument` itself when it is a file or is
// written as a path, else the first of `kinds` in the library with that name. Throws
// ConfigError (file: the argument) listing close names when a name is nowhere.
std::string resolve_file_argument(const std::string& argument,
                                  const std::vector<ConfigFileKind>& kinds);

}  // namespace trident

#endif  // TRIDENT_CONFIG_REFERENCES_H_
