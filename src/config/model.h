// Typed, validated transformer description (docs/schema.md, `model`); field names follow
// Megatron-LM.
#ifndef TRIDENT_CONFIG_MODEL_H_
#define TRIDENT_CONFIG_MODEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trident {

struct ModelSpec {
  std::string name;
  int num_layers = 0;
  int hidden_size = 0;
  int num_attention_heads = 0;
  int num_query_groups = 0;          // = num_attention_heads unless grouped-query attention
  std::int64_t ffn_hidden_size = 0;  // = 4 * hidden_size unless given
  int seq_length = 0;
  std::int64_t vocab_size = 0;
  bool swiglu = false;                      // gated MLP with three weight matrices (Llama)
  bool learned_position_embeddings = true;  // false for rotary (RoPE) and ALiBi models
  bool rotary_position_embeddings = false;  // RoPE: a rotary kernel on Q and K per layer
  // Separate output (logits) matrix instead of reusing the word embeddings (Llama).
  bool untie_embeddings_and_output_weights = false;
  // Dropout probabilities (Megatron --attention-dropout / --hidden-dropout, default 0.1;
  // Llama-family models train with 0). A dropout kernel and its mask exist only when > 0.
  double attention_dropout = 0.1;  // on the attention probabilities
  double hidden_dropout = 0.1;     // on the attention and MLP outputs, and the embeddings
  // Megatron --normalization: LayerNorm (weight and bias) or RMSNorm (weight only).
  bool rms_norm = false;

  // Megatron-Core TransformerConfig.add_bias_linear: biases on QKV, the attention projection and
  // the MLP's (and the experts') two matrices; unset: linear_biases() decides.
  std::optional<bool> add_bias_linear;
  // Megatron --qk-layernorm: the model's norm on each head of Q and K after the QKV projection.
  bool qk_layernorm = false;
  // Megatron --rotary-base / --rotary-scaling-factor: RoPE angles only (no change in work).
  std::int64_t rotary_base = 10000;
  double rotary_scaling_factor = 1;
  // Router options (megatron/core/transformer/moe/router.py): which experts a token picks and
  // with what weight, not how many tokens move (trident routes balanced, see PlanSpec
  // moe_load_imbalance). topk_scaling_factor 0: none.
  bool moe_router_pre_softmax = false;
  std::string moe_router_score_function = "softmax";
  double moe_router_topk_scaling_factor = 0;
  bool moe_router_enable_expert_bias = false;

  // Megatron --kv-channels: the dimension of one attention head (Qwen3's head_dim 128 with
  // hidden 2048 and 32 heads); 0 reads as hidden_size / num_attention_heads.
  int kv_channels = 0;

  // Mixture of experts (Megatron-Core megatron/core/transformer/moe/). num_experts 0: every MLP
  // is dense. A MoE layer's MLP is a router (h x E), E routed experts of width
  // moe_ffn_hidden_size of which each token visits moe_router_topk, and an optional shared
  // expert of width moe_shared_expert_intermediate_size that every token visits.
  int num_experts = 0;
  int moe_router_topk = 2;
  // Group-limited routing (Megatron --moe-router-num-groups / --moe-router-group-topk): the
  // experts split into moe_router_num_groups groups of consecutive experts, and a token's
  // top-k experts come from moe_router_group_topk of them. 0: no group limit.
  int moe_router_num_groups = 0;
  int moe_router_group_topk = 0;
  std::int64_t moe_ffn_hidden_size = 0;                  // resolved: = ffn_hidden_size if not given
  std::int64_t moe_shared_expert_intermediate_size = 0;  // 0: no shared expert
  // Resolved Megatron --moe-layer-freq (an integer N: layers 0, N, 2N, ... are MoE; or a 0/1
  // list per layer) with the first first_k_dense_replace layers made dense; size num_layers
  // when num_experts > 0, else empty.
  std::vector<int> moe_layer_pattern;
  int first_k_dense_replace = 0;

  // Multi-latent attention (DeepSeek-V2/V3; Megatron-Core multi_latent_attention.py): queries
  // through a low-rank projection of q_lora_rank (0: a direct projection), keys and values
  // through a shared latent of kv_lora_rank, with qk_pos_emb_head_dim rotary dimensions per
  // head beside the qk_head_dim ones.
  bool multi_latent_attention = false;
  int q_lora_rank = 0;
  int kv_lora_rank = 32;
  int qk_head_dim = 128;
  int qk_pos_emb_head_dim = 64;
  int v_head_dim = 128;

  // Multi-token prediction (Megatron --mtp-num-layers, Hugging Face num_nextn_predict_layers;
  // DeepSeek-V3's D = 1): mtp_num_layers depths after the decoder, each an embedding of the
  // shifted tokens, two RMSNorms, a 2h -> h projection, one transformer layer of the last
  // layer's kind, a final norm and the shared output layer with its own loss
  // (megatron/core/transformer/multi_token_prediction.py, workload/mtp.h). The loss scaling
  // factor weighs that loss; it changes no time or memory.
  int mtp_num_layers = 0;
  double mtp_loss_scaling_factor = 0.1;

  // Local attention (docs/attention.md). Sliding window (Megatron --window-size L,R and
  // --window-attn-skip-freq; gpt-oss): query i of a window layer attends keys [i - L, i]
  // (the causal mask drops the right extent R), L + 1 keys at most; window_left -1: no window.
  // window_layer_pattern: 1 where a layer uses the window (size num_layers when
  // window_left >= 0, else empty). Chunked attention (Hugging Face attention_chunk_size;
  // Llama 4): query i attends keys of its own chunk of attention_chunk_size tokens up to i, on
  // every layer that applies RoPE; 0: none. no_rope_pattern (Megatron --no-rope-freq): 1 where
  // a layer skips RoPE (Llama 4's global NoPE layers); size num_layers, or empty: every layer.
  int window_left = -1;
  int window_right = 0;
  std::vector<int> window_layer_pattern;
  int attention_chunk_size = 0;
  std::vector<int> no_rope_pattern;

  int head_dim() const { return kv_channels > 0 ? kv_channels : hidden_size / num_attention_heads; }
  bool moe() const { return num_experts > 0; }
  // Returns whether the linear layers carry biases: add_bias_linear, or when unset, trident's
  // reading before the key existed: GPT-style models do, gated (Llama-style) ones do not.
  bool linear_biases() const { return add_bias_linear.value_or(!swiglu); }
  // Returns whether the experts' linear layers carry biases: only when add_bias_linear is
  // given true (unset, trident keeps its earlier bias-free experts).
  bool expert_biases() const { return add_bias_linear.value_or(false); }
  // Returns the keys a query of layer `l` (0-based) attends at most under its sliding window
  // (window_left + 1), or 0 when the layer attends its whole causal prefix.
  int layer_window(int l) const {
    const bool on =
        l >= 0 && l < static_cast<int>(window_layer_pattern.size()) && window_layer_pattern[l] != 0;
    return on && window_left >= 0 ? window_left + 1 : 0;
  }
  // Returns whether layer `l` applies rotary embeddings (RoPE models, except no-RoPE layers).
  bool layer_rope(int l) const {
    return rotary_position_embeddings &&
           !(l >= 0 && l < static_cast<int>(no_rope_pattern.size()) && no_rope_pattern[l] != 0);
  }
  // Returns the chunk of layer `l`'s chunked attention (attention_chunk_size on RoPE layers),
  // or 0 when the layer attends its whole causal prefix.
  int layer_chunk(int l) const {
    const bool nope =
        l >= 0 && l < static_cast<int>(no_rope_pattern.size()) && no_rope_pattern[l] != 0;
    return attention_chunk_size > 0 && !nope ? attention_chunk_size : 0;
  }
  // Returns whether layer `l` attends fewer keys than its causal prefix somewhere: a window
  // or a chunk shorter than seq_length.
  bool layer_local(int l) const {
    const int w = layer_window(l), c = layer_chunk(l);
    return (w > 0 && w < seq_length) || (c > 0 && c < seq_length);
  }
  // Returns whether any layer is local (layer_local).
  bool local_attention() const {
    for (int l = 0; l < num_layers; ++l) {
      if (layer_local(l)) return true;
    }
    return false;
  }
  // Returns whether layer `l` (0-based) has a MoE MLP.
  bool is_moe_layer(int l) const {
    return moe() && l >= 0 && l < static_cast<int>(moe_layer_pattern.size()) &&
           moe_layer_pattern[l] != 0;
  }
};

}  // namespace trident

#endif  // TRIDENT_CONFIG_MODEL_H_
