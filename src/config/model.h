// Typed, validated transformer description (docs/schema.md, `model`); field names follow
// Megatron-LM.
#ifndef TRIDENT_CONFIG_MODEL_H_
#define TRIDENT_CONFIG_MODEL_H_

#include <cstdint>
#include <string>

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

  int head_dim() const { return hidden_size / num_attention_heads; }
};

}  // namespace trident

#endif  // TRIDENT_CONFIG_MODEL_H_
