#include "config/hf_attention_import.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "config/hf_nodes.h"
#include "config/map_reader.h"

namespace trident {
namespace {

YamlNodePtr list_node(const std::vector<std::string>& items, const YamlMark& mark) {
  auto list = std::make_shared<YamlNode>();
  list->kind = YamlNode::Kind::kSequence;
  list->mark = mark;
  for (const std::string& s : items) list->items.push_back(scalar_node(s, mark));
  return list;
}

void set(YamlNode* model, const char* key, const YamlEntry& from, YamlNodePtr value) {
  model->set(key, from.key_mark, std::move(value));
  model->find(key)->written_as = from.key;
}

bool is_false(const YamlEntry* e) {
  return e != nullptr && e->value->is_scalar() && e->value->scalar == "false";
}

}  // namespace

void add_hf_attention_fields(
    const YamlNode& config, YamlNode* model,
    const std::function<void(const YamlMark&, const std::string&, const std::string&)>& fail) {
  const YamlEntry* type = present(config, "model_type");
  const std::string model_type = type && type->value->is_scalar() ? type->value->scalar : "";
  // gpt-oss: every linear layer, the experts' included, carries a bias.
  if (model_type == "gpt_oss") {
    if (const YamlEntry* bias = present(config, "attention_bias")) {
      set(model, "add_bias_linear", *bias, bias->value);
    }
  }

  const YamlEntry* window = present(config, "sliding_window");
  if (window != nullptr && !is_false(present(config, "use_sliding_window"))) {
    std::int64_t w = 0;
    if (!window->value->is_scalar() || !parse_int64(window->value->scalar, &w) || w < 1) {
      fail(window->value->mark, window->key,
           "expected a window of at least 1 token, got " + window->value->describe());
    } else {
      set(model, "window_size", *window,
          list_node({window->value->scalar, "0"}, window->value->mark));
      if (const YamlEntry* types = present(config, "layer_types")) {
        std::vector<std::string> pattern;
        const YamlNode& v = *types->value;
        if (!v.is_sequence()) {
          fail(v.mark, types->key, "expected a list of layer types, got " + v.describe());
          return;
        }
        for (const YamlNodePtr& item : v.items) {
          const bool sliding = item->is_scalar() && item->scalar == "sliding_attention";
          const bool full = item->is_scalar() && item->scalar == "full_attention";
          if (!sliding && !full) {
            fail(item->mark, types->key,
                 item->describe() +
                     " is not a layer type trident models (expected sliding_attention or "
                     "full_attention)");
            return;
          }
          pattern.push_back(sliding ? "1" : "0");
        }
        set(model, "window_attn_skip_freq", *types, list_node(pattern, v.mark));
      }
    }
  }

  const YamlEntry* chunk = present(config, "attention_chunk_size");
  if (chunk != nullptr) set(model, "attention_chunk_size", *chunk, chunk->value);
  const YamlEntry* layers_entry = present(config, "num_hidden_layers");
  std::int64_t layers = 0;
  if (layers_entry == nullptr || !layers_entry->value->is_scalar() ||
      !parse_int64(layers_entry->value->scalar, &layers) || layers < 1 || layers > 100000) {
    return;  // the dense import reports num_hidden_layers
  }
  const YamlEntry* rope_layers = present(config, "no_rope_layers");
  if (rope_layers != nullptr && rope_layers->value->is_sequence() &&
      !rope_layers->value->items.empty()) {
    std::vector<std::string> pattern;
    for (const YamlNodePtr& item : rope_layers->value->items) {
      if (!item->is_scalar() || (item->scalar != "0" && item->scalar != "1")) {
        fail(item->mark, rope_layers->key, item->describe() + " is not 0 or 1");
        return;
      }
      pattern.push_back(item->scalar == "1" ? "0" : "1");  // HF: 1 = RoPE; trident: 1 = none
    }
    set(model, "no_rope_freq", *rope_layers, list_node(pattern, rope_layers->value->mark));
    return;
  }
  if (model_type != "llama4_text" && model_type != "llama4" && chunk == nullptr) return;
  const YamlEntry* interval = present(config, "no_rope_layer_interval");
  if (interval == nullptr) interval = present(config, "nope_layer_interval");
  std::int64_t every = 4;
  if (interval != nullptr && (!interval->value->is_scalar() ||
                              !parse_int64(interval->value->scalar, &every) || every < 1)) {
    fail(interval->value->mark, interval->key,
         "expected a layer interval of at least 1, got " + interval->value->describe());
    return;
  }
  std::vector<std::string> pattern;
  for (std::int64_t l = 0; l < layers; ++l) pattern.push_back((l + 1) % every == 0 ? "1" : "0");
  const YamlEntry& where = interval ? *interval : chunk ? *chunk : *layers_entry;
  set(model, "no_rope_freq", where, list_node(pattern, where.value->mark));
}

}  // namespace trident
