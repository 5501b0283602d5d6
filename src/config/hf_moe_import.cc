#include "config/hf_moe_import.h"

#include <algorithm>
#include <vector>

#include "config/hf_nodes.h"
#include "config/map_reader.h"

namespace trident {
namespace {

// Copies config[from] to model[to], keeping its position and name.
void copy(const YamlNode& config, const char* from, const char* to, YamlNode* model) {
  if (const YamlEntry* e = present(config, from)) {
    model->set(to, e->key_mark, e->value);
    model->find(to)->written_as = e->key;
  }
}

}  // namespace

void add_hf_moe_fields(
    const YamlNode& config, YamlNode* model,
    const std::function<void(const YamlMark&, const std::string&, const std::string&)>& fail) {
  copy(config, "head_dim", "kv_channels", model);
  // Multi-latent attention (DeepSeek-V2/V3).
  if (present(config, "kv_lora_rank") != nullptr) {
    model->set("multi_latent_attention", config.mark, scalar_node("true", config.mark));
    copy(config, "kv_lora_rank", "kv_lora_rank", model);
    copy(config, "q_lora_rank", "q_lora_rank", model);
    copy(config, "qk_nope_head_dim", "qk_head_dim", model);
    copy(config, "qk_rope_head_dim", "qk_pos_emb_head_dim", model);
    copy(config, "v_head_dim", "v_head_dim", model);
  }

  // DeepSeek-V3's multi-token-prediction depths (its config.json: num_nextn_predict_layers 1).
  if (const YamlEntry* e = present(config, "num_nextn_predict_layers")) {
    if (!e->value->is_scalar() || e->value->scalar != "0") {
      copy(config, "num_nextn_predict_layers", "mtp_num_layers", model);
    }
  }

  const YamlEntry* experts = nullptr;
  for (const char* key : {"num_local_experts", "n_routed_experts", "num_experts"}) {
    if (experts == nullptr) experts = present(config, key);
  }
  if (experts == nullptr) return;
  std::int64_t n = 0;
  const YamlNode& v = *experts->value;
  if (!v.is_scalar() || !parse_int64(v.scalar, &n) || n < 0) {
    fail(v.mark, experts->key, "expected a number of experts, got " + v.describe());
    return;
  }
  if (n <= 1) return;  // one expert: a dense MLP
  model->set("num_experts", experts->key_mark, experts->value);
  model->find("num_experts")->written_as = experts->key;
  copy(config, "num_experts_per_tok", "moe_router_topk", model);
  // DeepSeek-V2/V3's group-limited routing (modeling_deepseek.py MoEGate: n_group groups,
  // topk_group of them per token).
  copy(config, "n_group", "moe_router_num_groups", model);
  copy(config, "topk_group", "moe_router_group_topk", model);

  const auto integer = [&](const char* key, std::int64_t fallback) {
    const YamlEntry* e = present(config, key);
    std::int64_t out = fallback;
    if (e != nullptr && (!e->value->is_scalar() || !parse_int64(e->value->scalar, &out))) {
      fail(e->value->mark, e->key, "expected an integer, got " + e->value->describe());
      return fallback;
    }
    return out;
  };
  const YamlEntry* layers_entry = present(config, "num_hidden_layers");
  std::int64_t layers = 0;
  if (layers_entry == nullptr || !layers_entry->value->is_scalar() ||
      !parse_int64(layers_entry->value->scalar, &layers) || layers < 1 || layers > 100000) {
    return;  // the dense import reports num_hidden_layers
  }
  const bool llama4 = present(config, "interleave_moe_layer_step") != nullptr ||
                      present(config, "intermediate_size_mlp") != nullptr;
  std::vector<int> pattern(layers, 1);
  if (present(config, "n_routed_experts") != nullptr) {
    const std::int64_t first = integer("first_k_dense_replace", 0);
    const std::int64_t every = std::max<std::int64_t>(1, integer("moe_layer_freq", 1));
    for (std::int64_t i = 0; i < layers; ++i) pattern[i] = i >= first && i % every == 0;
    copy(config, "moe_intermediate_size", "moe_ffn_hidden_size", model);
    const std::int64_t shared = integer("n_shared_experts", 0);
    const std::int64_t width = integer("moe_intermediate_size", 0);
    if (shared > 0 && width > 0) {
      model->set("moe_shared_expert_intermediate_size", config.mark,
                 scalar_node(std::to_string(shared * width), config.mark));
    }
  } else if (llama4) {
    const std::int64_t step = std::max<std::int64_t>(1, integer("interleave_moe_layer_step", 1));
    for (std::int64_t i = 0; i < layers; ++i) pattern[i] = (i + 1) % step == 0;
    // Experts and the shared expert are intermediate_size wide; dense layers
    // intermediate_size_mlp.
    copy(config, "intermediate_size", "moe_ffn_hidden_size", model);
    copy(config, "intermediate_size", "moe_shared_expert_intermediate_size", model);
    copy(config, "intermediate_size_mlp", "ffn_hidden_size", model);
  } else if (present(config, "decoder_sparse_step") != nullptr ||
             present(config, "mlp_only_layers") != nullptr ||
             present(config, "moe_intermediate_size") != nullptr) {
    const std::int64_t step = std::max<std::int64_t>(1, integer("decoder_sparse_step", 1));
    for (std::int64_t i = 0; i < layers; ++i) pattern[i] = (i + 1) % step == 0;
    if (const YamlEntry* dense = present(config, "mlp_only_layers")) {
      if (!dense->value->is_sequence()) {
        fail(dense->value->mark, dense->key,
             "expected a list of layer indices, got " + dense->value->describe());
      } else {
        for (const YamlNodePtr& item : dense->value->items) {
          std::int64_t l = -1;
          if (item->is_scalar() && parse_int64(item->scalar, &l) && l >= 0 && l < layers) {
            pattern[l] = 0;
          } else {
            fail(item->mark, dense->key, item->describe() + " is not a layer index");
          }
        }
      }
    }
    copy(config, "moe_intermediate_size", "moe_ffn_hidden_size", model);
    copy(config, "shared_expert_intermediate_size", "moe_shared_expert_intermediate_size", model);
  }
  auto list = std::make_shared<YamlNode>();
  list->kind = YamlNode::Kind::kSequence;
  list->mark = experts->value->mark;
  for (int p : pattern) list->items.push_back(scalar_node(p ? "1" : "0", list->mark));
  model->set("moe_layer_freq", experts->key_mark, list);
}

}  // namespace trident
