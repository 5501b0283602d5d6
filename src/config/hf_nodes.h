// Small helpers the Hugging Face importers share: reading a config.json key that may be null
// and making YAML nodes that keep the position of the value they were derived from.
#ifndef TRIDENT_CONFIG_HF_NODES_H_
#define TRIDENT_CONFIG_HF_NODES_H_

#include <string>

#include "config/yaml_tree.h"

namespace trident {

// Returns config's entry `key`, or nullptr when it is absent or null (JSON null is "not set").
const YamlEntry* present(const YamlNode& config, const char* key);

// Returns a scalar node holding `text`, reported at `mark` (the value it was derived from).
YamlNodePtr scalar_node(const std::string& text, const YamlMark& mark);

}  // namespace trident

#endif  // TRIDENT_CONFIG_HF_NODES_H_
