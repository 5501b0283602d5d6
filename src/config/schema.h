// The set of keys each YAML map may hold, from the settings table (config/settings.h): shared
// by the section readers (unknown-key checks) and `--set` / `sweep:` (key path checks).
#ifndef TRIDENT_CONFIG_SCHEMA_H_
#define TRIDENT_CONFIG_SCHEMA_H_

#include <string>
#include <vector>

namespace trident {

// Returns the keys allowed in the map at dotted `map_path`: "" is the scenario file itself,
// then "cluster", "cluster.gpu", "cluster.gpu.peak_flops", "cluster.gpu.efficiency",
// "cluster.nvlink", "cluster.network", "model", "plan". Returns nullptr for any other path
// (a leaf or an unknown key).
const std::vector<std::string>* schema_keys(const std::string& map_path);

// Whether `path` is a bare section ("cluster", "model", "plan"): its value is a file path or
// library name that replaces the whole section (`--set cluster=hgx-b200`).
bool is_section_reference_key(const std::string& path);

// Checks that `path` names a setting that `--set` or `sweep:` may change: a bare section
// (above), or a path starting with "cluster.", "model." or "plan." that leads through known
// maps to a known key.
// Returns "" when it does, else a one-line reason with a did-you-mean hint.
std::string schema_path_error(const std::string& path);

}  // namespace trident

#endif  // TRIDENT_CONFIG_SCHEMA_H_
