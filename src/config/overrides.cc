#include "config/overrides.h"

#include <cctype>

#include "config/schema.h"
#include "config/settings.h"
#include "core/text.h"

namespace trident {
namespace {

// Overridden values have no line or column: their "file" is the --set label.
void clear_positions(YamlNode& node, const std::string& label) {
  node.mark = YamlMark{label, 0, 0};
  for (YamlNodePtr& item : node.items) clear_positions(*item, label);
  for (YamlEntry& e : node.entries) {
    e.key_mark = YamlMark{label, 0, 0};
    clear_positions(*e.value, label);
  }
}

}  // namespace

Override parse_override(const std::string& text) {
  Override ov;
  ov.label = "--set " + text;
  const size_t eq = text.find('=');
  SourceLocation where;
  where.file = ov.label;
  if (eq == std::string::npos) {
    throw ConfigError(where, "expected key=value, e.g. --set plan.tensor_parallel=4");
  }
  ov.key = trim(text.substr(0, eq));
  ov.value = trim(text.substr(eq + 1));
  if (ov.key.empty()) {
    throw ConfigError(where, "empty key (expected key=value, e.g. --set plan.tensor_parallel=4)");
  }
  const std::string error = schema_path_error(ov.key);
  if (!error.empty()) {
    where.key = ov.key;
    throw ConfigError(where, error);
  }
  ov.key = canonical_key_path(ov.key);
  return ov;
}

void apply_override(YamlNode& root, const Override& ov) {
  YamlNodePtr value = parse_yaml(ov.value, ov.label);
  clear_positions(*value, ov.label);
  set_setting(root, ov.key, value, YamlMark{ov.label, 0, 0}, ov.label);
}

void set_setting(YamlNode& root, const std::string& written_key, YamlNodePtr value,
                 const YamlMark& key_mark, const std::string& label) {
  const std::string key = canonical_key_path(written_key);
  const std::vector<std::string> parts = split_key_path(key);
  YamlNode* node = &root;
  std::string path;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    path += (path.empty() ? "" : ".") + parts[i];
    YamlEntry* entry = node->find(parts[i]);
    if (entry == nullptr || entry->value->is_null()) {
      auto map = std::make_shared<YamlNode>();
      map->kind = YamlNode::Kind::kMap;
      map->mark = key_mark;
      node->set(parts[i], key_mark, map);
      entry = node->find(parts[i]);
    } else if (!entry->value->is_map()) {
      throw ConfigError(location_of(entry->value->mark, path),
                        "cannot apply " + label + ": expected a map of settings here, got " +
                            entry->value->describe());
    }
    node = entry->value.get();
  }
  // The setting replaces what the file wrote under any of its names.
  if (const Setting* row = find_setting(path, parts.back())) {
    for (const std::string& alias : row->aliases) node->erase(alias);
  }
  node->set(parts.back(), key_mark, std::move(value));

  if (key == "plan.num_microbatches") node->erase("global_batch_size");
  if (key == "plan.global_batch_size") node->erase("num_microbatches");
  if (key == "plan.virtual_stages") node->erase("num_layers_per_virtual_pipeline_stage");
  if (key == "plan.num_layers_per_virtual_pipeline_stage") node->erase("virtual_stages");
  if (key == "plan.pipeline_layers") {
    node->erase("decoder_first_pipeline_num_layers");
    node->erase("decoder_last_pipeline_num_layers");
  }
  if (key == "plan.decoder_first_pipeline_num_layers" ||
      key == "plan.decoder_last_pipeline_num_layers") {
    node->erase("pipeline_layers");
  }
}

}  // namespace trident
