#include "config/hf_nodes.h"

#include <memory>

namespace trident {

const YamlEntry* present(const YamlNode& config, const char* key) {
  const YamlEntry* e = config.find(key);
  return e != nullptr && !e->value->is_null() ? e : nullptr;
}

YamlNodePtr scalar_node(const std::string& text, const YamlMark& mark) {
  auto node = std::make_shared<YamlNode>();
  node->kind = YamlNode::Kind::kScalar;
  node->scalar = text;
  node->mark = mark;
  return node;
}

}  // namespace trident
