// Settings given as file paths: a scenario's `cluster:`, `model:` and `plan:` (YAML files;
// a model also as a Hugging Face config.json, `hf:path` or any `.json` path), and a
// cluster's `gpu:`. A path is relative to the file it is written in; one from `--set` is
// relative to the working directory.
#ifndef TRIDENT_CONFIG_REFERENCES_H_
#define TRIDENT_CONFIG_REFERENCES_H_

#include <string>

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

}  // namespace trident

#endif  // TRIDENT_CONFIG_REFERENCES_H_
