// Mixture-of-experts and multi-latent-attention fields of a Hugging Face config.json, as the
// Megatron-LM names trident reads (used by hf_import.cc):
//   num_local_experts (Mixtral, Llama 4) / num_experts (Qwen MoE) / n_routed_experts
//     (DeepSeek)                              -> num_experts
//   num_experts_per_tok                       -> moe_router_topk
//   moe_intermediate_size (Qwen, DeepSeek); Llama 4: intermediate_size (its dense layers'
//     width is intermediate_size_mlp)         -> moe_ffn_hidden_size (and ffn_hidden_size)
//   shared_expert_intermediate_size (Qwen2 MoE); n_shared_experts x moe_intermediate_size
//     (DeepSeek); Llama 4: intermediate_size  -> moe_shared_expert_intermediate_size
//   which layers are MoE, as a 0/1 list       -> moe_layer_freq:
//     Qwen: layer i when (i + 1) % decoder_sparse_step == 0 and i not in mlp_only_layers
//     (transformers' Qwen2MoeDecoderLayer); DeepSeek: i >= first_k_dense_replace and
//     i % moe_layer_freq == 0 (DeepseekV3DecoderLayer); Llama 4: (i + 1) %
//     interleave_moe_layer_step == 0 (Llama4TextDecoderLayer); Mixtral: every layer
//   head_dim                                  -> kv_channels
//   kv_lora_rank (DeepSeek)                   -> multi_latent_attention: true, kv_lora_rank,
//     q_lora_rank (null: none), qk_nope_head_dim -> qk_head_dim, qk_rope_head_dim ->
//     qk_pos_emb_head_dim, v_head_dim
//   num_nextn_predict_layers (DeepSeek-V3: 1)  -> mtp_num_layers (multi-token prediction; 0 or
//     absent: none)
// One expert (num_experts 0 or 1) is a dense MLP.
#ifndef TRIDENT_CONFIG_HF_MOE_IMPORT_H_
#define TRIDENT_CONFIG_HF_MOE_IMPORT_H_

#include <functional>
#include <string>

#include "config/yaml_tree.h"

namespace trident {

// Adds the fields above found in `config` to `model`; `fail(mark, key, message)` reports a
// field it cannot read.
void add_hf_moe_fields(
    const YamlNode& config, YamlNode* model,
    const std::function<void(const YamlMark&, const std::string&, const std::string&)>& fail);

}  // namespace trident

#endif  // TRIDENT_CONFIG_HF_MOE_IMPORT_H_
