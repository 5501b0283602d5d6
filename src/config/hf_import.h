// Models described by a Hugging Face `config.json` (`model: hf:path/to/config.json`, or any
// `.json` model path), converted to the Megatron-LM names trident reads.
#ifndef TRIDENT_CONFIG_HF_IMPORT_H_
#define TRIDENT_CONFIG_HF_IMPORT_H_

#include <string>

#include "config/diagnostics.h"
#include "config/yaml_tree.h"

namespace trident {

// Returns the `model` map for the parsed config.json `config` (a map), named `name`:
//   num_hidden_layers (or n_layer)         -> num_layers
//   hidden_size (or n_embd)                -> hidden_size
//   num_attention_heads (or n_head)        -> num_attention_heads
//   num_key_value_heads                    -> num_query_groups (optional)
//   intermediate_size (or n_inner)         -> ffn_hidden_size (optional)
//   vocab_size                             -> vocab_size
//   seq_length                             -> seq_length; max_position_embeddings is the
//                                             context window, not the training length: the
//                                             scenario gives it (overrides: or --set)
//   hidden_act (activation_function)       -> swiglu: silu/swish/swiglu give the gated MLP,
//                                             gelu and relu variants the plain one
//   tie_word_embeddings (default true)     -> untie_embeddings_and_output_weights = !tie
//   rope_theta, rope_scaling or a rotary model_type -> position_embedding: rope; bloom and
//   mpt -> alibi; otherwise learned.
//   attention_dropout (attn_pdrop, attention_probs_dropout_prob) -> attention_dropout
//   hidden_dropout (resid_pdrop, hidden_dropout_prob) -> hidden_dropout; a gated (Llama-style)
//                                             config without them gets 0 (no dropout modules)
//   rms_norm_eps -> normalization: RMSNorm; layer_norm_eps / layer_norm_epsilon -> LayerNorm
//   model_type                             -> checked: a decoder-only transformer type
//                                             (llama, mixtral, qwen2, gpt2, ...) or absent;
//                                             any other (bert, t5, mamba, ...) is refused
//   mixture-of-experts and multi-latent-attention fields: config/hf_moe_import.h; a config
//   whose language model sits under text_config (Llama 4) is read from there
// Values keep their JSON positions and original names, so later range checks name the JSON
// field. Other fields are ignored. Reports a missing field, an activation it cannot map or a
// non-boolean tie_word_embeddings through `diag` (throws without).
YamlNodePtr model_map_from_hf(const YamlNode& config, const std::string& name,
                              Diagnostics* diag = nullptr);

// Returns the model name for a config.json at `path`: its directory's name for
// ".../Meta-Llama-3-8B/config.json", else the file name without ".json".
std::string hf_model_name(const std::string& path);

// Returns whether a model reference names a Hugging Face config: "hf:" prefix or ".json".
bool is_hf_reference(const std::string& reference);
// Returns the path of a Hugging Face reference ("hf:" removed).
std::string hf_reference_path(const std::string& reference);

}  // namespace trident

#endif  // TRIDENT_CONFIG_HF_IMPORT_H_
