// Conversion of the `model:` section (docs/schema.md, `model`; Megatron-LM field names).
#include <cstdlib>

#include "config/limits.h"
#include "config/section_readers.h"
#include "core/text.h"

namespace trident {
namespace {

// A per-layer 0/1 pattern given as an integer N or a 0/1 list with one entry per layer, as
// Megatron's --moe-layer-freq, --window-attn-skip-freq and --no-rope-freq take it
// (megatron/training/arguments.py moe_freq_type). `from_every(l, N)` expands the integer for
// layer l (0-based).
template <typename Rule>
std::vector<int> read_layer_pattern(const MapReader& map, const std::string& key, int layers,
                                    Rule from_every) {
  std::vector<int> out(layers, 0);
  const YamlNode* v = map.get(key);
  if (v == nullptr || v->is_scalar()) {
    const int every = static_cast<int>(map.opt_int(key, 1, limits::kMaxLayers).value_or(1));
    for (int l = 0; l < layers; ++l) out[l] = from_every(l, every);
    return out;
  }
  const std::string expected = "an integer N or a list of 0/1 with one entry per layer";
  if (!v->is_sequence() || static_cast<int>(v->items.size()) != layers) {
    map.fail(key, "expected " + expected + " (" + std::to_string(layers) + " layers), got " +
                      v->describe());
  }
  for (int l = 0; l < layers; ++l) {
    const YamlNodePtr& item = v->items[l];
    if (!item->is_scalar() || item->quoted || (item->scalar != "0" && item->scalar != "1")) {
      throw ConfigError(location_of(item->mark, map.key_path(key)),
                        item->describe() + " is not 0 or 1 (expected " + expected + ")");
    }
    out[l] = item->scalar == "1" ? 1 : 0;
  }
  return out;
}

// Megatron --moe-layer-freq: layer i is MoE when i % N == 0
// (megatron/core/transformer/moe/moe_utils.py, TransformerConfig.moe_layer_freq).
std::vector<int> read_moe_layer_pattern(const MapReader& map, int layers) {
  return read_layer_pattern(map, "moe_layer_freq", layers,
                            [](int l, int every) { return l % every == 0 ? 1 : 0; });
}

// Megatron --window-size [L, R]: two integers, -1 for an infinite side
// (TransformerConfig.window_size; L -1 turns the window off).
void read_window_size(const MapReader& map, ModelSpec* m) {
  const YamlNode* v = map.get("window_size");
  if (v == nullptr) return;
  const std::string expected = "a list [L, R] of two integers, each -1 (infinite) or more";
  if (!v->is_sequence() || v->items.size() != 2) {
    map.fail("window_size", "expected " + expected + ", got " + v->describe());
  }
  int side[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    const YamlNodePtr& item = v->items[i];
    char* end = nullptr;
    const long n =
        item->is_scalar() && !item->quoted ? std::strtol(item->scalar.c_str(), &end, 10) : 0;
    if (!item->is_scalar() || item->quoted || item->scalar.empty() || *end != '\0' || n < -1 ||
        n > limits::kMaxSeqLength) {
      throw ConfigError(location_of(item->mark, map.key_path("window_size")),
                        item->describe() + " is not a window extent (expected " + expected +
                            ", at most " + std::to_string(limits::kMaxSeqLength) + ")");
    }
    side[i] = static_cast<int>(n);
  }
  m->window_left = side[0];
  m->window_right = side[1];
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
  map.field([&] {
    read_window_size(map, &m);
    if (map.has("window_attn_skip_freq") && !map.has("window_size")) {
      map.fail("window_attn_skip_freq",
               "window_attn_skip_freq without window_size (expected window_size [L, 0] too: "
               "the pattern picks the layers that use the window)");
    }
    // Megatron-Core is_layer_window_attention (transformer/utils.py): with an integer N,
    // layer number n (from 1) keeps full attention when n % N == 0; a list gives 1 for the
    // window layers. Without window_size the pattern means nothing (model_issues says so).
    if (m.window_left >= 0) {
      m.window_layer_pattern =
          map.has("window_attn_skip_freq")
              ? read_layer_pattern(map, "window_attn_skip_freq", m.num_layers,
                                   [](int l, int every) { return (l + 1) % every != 0 ? 1 : 0; })
              : std::vector<int>(m.num_layers, 1);
    }
  });
  map.field([&] {
    m.attention_chunk_size = static_cast<int>(map.integer("attention_chunk_size").value_or(0));
  });
  map.field([&] {
    // TransformerConfig.no_rope_freq: with an integer N, every Nth layer (from 1) skips RoPE.
    if (!map.has("no_rope_freq")) return;
    const YamlNode* v = map.get("no_rope_freq");
    if (v->is_scalar()) {
      const auto every = map.opt_int("no_rope_freq", 1, limits::kMaxLayers);
      if (every && m.num_layers % *every != 0) {
        map.fail("no_rope_freq", "no_rope_freq " + std::to_string(*every) +
                                     " does not divide num_layers " + std::to_string(m.num_layers) +
                                     " (Megatron-Core asserts it; expected a divisor or a list)");
      }
    }
    m.no_rope_pattern = read_layer_pattern(map, "no_rope_freq", m.num_layers, [](int l, int every) {
      return (l + 1) % every == 0 ? 1 : 0;
    });
  });
  if (map.problems() == before) report_issues(map, model_issues(m), false);
  return m;
}

}  // namespace trident
