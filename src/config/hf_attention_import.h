// Local-attention fields of a Hugging Face config.json (docs/attention.md), as the names
// trident reads (used by hf_import.cc):
//   sliding_window W (gpt-oss: 128; Mistral)   -> window_size [W, 0], as Megatron-Bridge's
//     gpt-oss provider maps it (window_size=(128, 0)); null, or use_sliding_window false
//     (Qwen2), gives none
//   layer_types ("sliding_attention" / "full_attention" per layer; gpt-oss alternates, its
//     first layer sliding)                     -> window_attn_skip_freq as a 0/1 list; absent:
//     every layer uses the window
//   attention_chunk_size (Llama 4: 8192)       -> attention_chunk_size
//   no_rope_layers (Llama 4; 1 = the layer applies RoPE) -> no_rope_freq as a 0/1 list
//     (1 = no RoPE); empty or absent in a Llama 4 config: every no_rope_layer_interval-th
//     (or nope_layer_interval-th) layer, 4 by default, counted from 1 (transformers'
//     Llama4TextConfig)
//   attention_bias of model_type gpt_oss       -> add_bias_linear (its experts carry biases)
#ifndef TRIDENT_CONFIG_HF_ATTENTION_IMPORT_H_
#define TRIDENT_CONFIG_HF_ATTENTION_IMPORT_H_

#include <functional>
#include <string>

#include "config/yaml_tree.h"

namespace trident {

// Adds the fields above found in `config` to `model`; `fail(mark, key, message)` reports a
// field it cannot read.
void add_hf_attention_fields(
    const YamlNode& config, YamlNode* model,
    const std::function<void(const YamlMark&, const std::string&, const std::string&)>& fail);

}  // namespace trident

#endif  // TRIDENT_CONFIG_HF_ATTENTION_IMPORT_H_
