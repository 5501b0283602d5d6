// Conversion of the `model:` section (docs/schema.md, `model`; Megatron-LM field names).
#include "config/limits.h"
#include "config/section_readers.h"
#include "core/text.h"

namespace trident {
namespace {

// Megatron --moe-layer-freq: an integer N (layer i is MoE when i % N == 0) or a 0/1 list with
// one entry per layer (megatron/core/transformer/moe/moe_utils.py, get_moe_layer_wise_logging
// and TransformerConfig.moe_layer_freq).
std::vector<int> read_moe_layer_pattern(const MapReader& map, int layers) {
  std::vector<int> out(layers, 0);
  const YamlNode* v = map.get("moe_layer_freq");
  if (v == nullptr || v->is_scalar()) {
    const int every =
        static_cast<int>(map.opt_int("moe_layer_freq", 1, limits::kMaxLayers).value_or(1));
    for (int l = 0; l < layers; ++l) out[l] = l % every == 0 ? 1 : 0;
    return out;
  }
  const std::string expected = "an integer N or a list of 0/1 with one entry per layer";
  if (!v->is_sequence() || static_cast<int>(v->items.size()) != layers) {
    map.fail("moe_layer_freq", "expected " + expected + " (" + std::to_string(layers) +
                                   " layers), got " + v->describe());
  }
  for (int l = 0; l < layers; ++l) {
    const YamlNodePtr& item = v->items[l];
    if (!item->is_scalar() || item->quoted || (item->scalar != "0" && item->scalar != "1")) {
      throw ConfigError(location_of(item->mark, map.key_path("moe_layer_freq")),
                        item->describe() + " is not 0 or 1 (expected " + expected + ")");
    }
    out[l] = item->scalar == "1" ? 1 : 0;
  }
  return out;
}

}  // namespace

ModelSpec read_model(const MapReader& map) {
  const std::size_t before = map.problems();
  map.check_keys();
  ModelSpec m;
  map.field([&] { m.name = *map.text("name"); });
  map.field([&] { m.num_layers = static_cast<int>(*map.integer("num_layers")); });
  map.field([&] { m.hidden_size = static_cast<int>(*map.integer("hidden_size")); });
  map.field([&] { m.num_attention_heads = static_cast<int>(*map.integer("num_attention_heads")); });
  map.field([&] {
    m.num_query_groups =
        static_cast<int>(map.integer("num_query_groups").value_or(m.num_attention_heads));
  });
  map.field([&] { m.swiglu = *map.flag("swiglu"); });
  map.field([&] {
    if (auto ffn = map.integer("ffn_hidden_size")) {
      m.ffn_hidden_size = *ffn;
    } else if (m.swiglu) {
      map.fail("swiglu",
               "a SwiGLU model needs ffn_hidden_size (expected the gated MLP width, e.g. 28672 "
               "for Llama-3-70B; there is no default)");
    } else {
      m.ffn_hidden_size = 4 * static_cast<std::int64_t>(m.hidden_size);
    }
  });
  map.field([&] { m.seq_length = static_cast<int>(*map.integer("seq_length")); });
  map.field([&] { m.vocab_size = *map.integer("vocab_size"); });
  map.field([&] {
    const std::string position = *map.text("position_embedding");
    m.learned_position_embeddings = position == "learned" || position == "learned_absolute";
    m.rotary_position_embeddings = position == "rope";
  });
  map.field([&] {
    m.untie_embeddings_and_output_weights = *map.flag("untie_embeddings_and_output_weights");
  });
  map.field([&] { m.attention_dropout = *map.number("attention_dropout"); });
  map.field([&] { m.hidden_dropout = *map.number("hidden_dropout"); });
  map.field([&] { m.rms_norm = *map.text("normalization") == "RMSNorm"; });
  map.field([&] { m.kv_channels = static_cast<int>(map.integer("kv_channels").value_or(0)); });
  // Megatron's default is true; a gated (Llama-style) model without the key keeps trident's
  // earlier reading, no biases, as its recipes pass --disable-bias-linear (linear_biases).
  map.field([&] { m.add_bias_linear = map.flag("add_bias_linear"); });
  map.field([&] { m.qk_layernorm = *map.flag("qk_layernorm"); });
  map.field([&] { m.rotary_base = *map.integer("rotary_base"); });
  map.field([&] { m.rotary_scaling_factor = *map.number("rotary_scaling_factor"); });
  map.field([&] { m.moe_router_pre_softmax = *map.flag("moe_router_pre_softmax"); });
  map.field([&] { m.moe_router_score_function = *map.text("moe_router_score_function"); });
  map.field([&] {
    m.moe_router_topk_scaling_factor = map.number("moe_router_topk_scaling_factor").value_or(0);
  });
  map.field([&] { m.moe_router_enable_expert_bias = *map.flag("moe_router_enable_expert_bias"); });
  map.field([&] { m.num_experts = static_cast<int>(map.integer("num_experts").value_or(0)); });
  map.field([&] { m.moe_router_topk = static_cast<int>(*map.integer("moe_router_topk")); });
  map.field([&] {
    m.moe_router_num_groups = static_cast<int>(map.integer("moe_router_num_groups").value_or(0));
  });
  map.field([&] {
    m.moe_router_group_topk = static_cast<int>(map.integer("moe_router_group_topk").value_or(0));
  });
  map.field([&] {
    m.moe_ffn_hidden_size = map.integer("moe_ffn_hidden_size").value_or(m.ffn_hidden_size);
  });
  map.field([&] {
    m.moe_shared_expert_intermediate_size =
        map.integer("moe_shared_expert_intermediate_size").value_or(0);
  });
  map.field(
      [&] { m.first_k_dense_replace = static_cast<int>(*map.integer("first_k_dense_replace")); });
  map.field([&] {
    if (m.num_experts == 0) return;
    m.moe_layer_pattern = read_moe_layer_pattern(map, m.num_layers);
    for (int l = 0; l < m.first_k_dense_replace && l < m.num_layers; ++l)
      m.moe_layer_pattern[l] = 0;
  });
  map.field([&] { m.multi_latent_attention = *map.flag("multi_latent_attention"); });
  map.field([&] { m.q_lora_rank = static_cast<int>(map.integer("q_lora_rank").value_or(0)); });
  map.field([&] { m.kv_lora_rank = static_cast<int>(*map.integer("kv_lora_rank")); });
  map.field([&] { m.qk_head_dim = static_cast<int>(*map.integer("qk_head_dim")); });
  map.field([&] { m.qk_pos_emb_head_dim = static_cast<int>(*map.integer("qk_pos_emb_head_dim")); });
  map.field([&] { m.v_head_dim = static_cast<int>(*map.integer("v_head_dim")); });
  map.field(
      [&] { m.mtp_num_layers = static_cast<int>(map.integer("mtp_num_layers").value_or(0)); });
  map.field([&] { m.mtp_loss_scaling_factor = *map.number("mtp_loss_scaling_factor"); });
  if (map.problems() == before) report_issues(map, model_issues(m), false);
  return m;
}

}  // namespace trident
