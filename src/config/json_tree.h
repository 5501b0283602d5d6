// JSON documents read into the same position-keeping tree as YAML (yaml_tree.h), so that a
// Hugging Face config.json is checked, overridden and reported like any other input.
#ifndef TRIDENT_CONFIG_JSON_TREE_H_
#define TRIDENT_CONFIG_JSON_TREE_H_

#include <string>

#include "config/diagnostics.h"
#include "config/yaml_tree.h"

namespace trident {

// Parses one JSON document (nlohmann-json, strict: no comments, no NaN) into a tree whose
// marks give each value's and key's line and column in `file`. Strings become quoted
// scalars; numbers, true, false and null plain scalars as written (null a null node).
// Throws ConfigError "file:line:col: JSON syntax error: ..." for malformed input, and for
// input past the depth and node limits of config/limits.h. A duplicate key throws, unless
// `diag` is given: then it is recorded there and its later value dropped.
YamlNodePtr parse_json(const std::string& text, const std::string& file,
                       Diagnostics* diag = nullptr);

}  // namespace trident

#endif  // TRIDENT_CONFIG_JSON_TREE_H_
