// Typed, validated transformer description (DESIGN.md "Model"); field names follow Megatron-LM.
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
  bool learned_position_embeddings = true;  // false for rotary (RoPE) models
  // Separate output (logits) matrix instead of reusing the word embeddings (Llama).
  bool untie_embeddings_and_output_weights = false;

  int head_dim() const { return hidden_size / num_attention_heads; }
};

}  // namespace trident

#endif  // TRIDENT_CONFIG_MODEL_H_
