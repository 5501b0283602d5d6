#include "config/schema.h"

#include "config/did_you_mean.h"
#include "config/settings.h"
#include "core/text.h"

namespace trident {

const std::vector<std::string>* schema_keys(const std::string& map_path) {
  return section_keys(map_path);
}

bool is_section_reference_key(const std::string& path) {
  return path == "cluster" || path == "model" || path == "plan";
}

std::string schema_path_error(const std::string& path) {
  const std::vector<std::string> parts = split_key_path(path);
  const std::vector<std::string> sections = {"cluster", "model", "plan"};
  // A bare section takes a reference (a file or library name) that replaces it whole.
  if (parts.size() == 1 && is_section_reference_key(path)) return "";
  if (parts.size() < 2 || parts[0].empty() || schema_keys(parts[0]) == nullptr) {
    const std::string hint = parts.empty() ? "" : closest_match(parts[0], sections);
    return "`" + path + "` is not a setting (expected a key path starting with cluster., model. " +
           "or plan., or a bare section to swap: cluster=NAME" +
           (hint.empty() ? "" : "; did you mean `" + hint + "`?") + ")";
  }
  std::string prefix = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::vector<std::string>* keys = section_names(prefix);
    if (keys == nullptr) {
      return "`" + path + "` is not a setting (`" + prefix + "` has no sub-keys)";
    }
    bool known = false;
    for (const std::string& k : *keys) known = known || k == parts[i];
    if (!known) {
      return "unknown key `" + parts[i] + "` in `" + path + "` (" + suggestion(parts[i], *keys) +
             ")";
    }
    prefix += "." + canonical_key(prefix, parts[i]);
  }
  return "";
}

}  // namespace trident
