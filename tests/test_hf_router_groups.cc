// Group-limited routing from Hugging Face config.json (config/hf_moe_import): DeepSeek's
// n_group / topk_group become moe_router_num_groups / moe_router_group_topk.
#include <catch2/catch.hpp>
#include <string>

#include "config_support.h"

using namespace trident;
using namespace trident::testing;

TEST_CASE("DeepSeek-V3's n_group and topk_group import as group-limited routing",
          "[hf][moe][flex]") {
  // deepseek-ai/DeepSeek-V3 config.json (the fields that matter here).
  const ModelSpec m = load_model_file(write_temp("DeepSeek-V3-groups/config.json", R"({
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
    "first_k_dense_replace": 3, "hidden_act": "silu", "hidden_size": 7168,
    "intermediate_size": 18432, "kv_lora_rank": 512, "moe_intermediate_size": 2048,
    "n_group": 8, "n_routed_experts": 256, "n_shared_experts": 1, "num_attention_heads": 128,
    "num_experts_per_tok": 8, "num_hidden_layers": 61, "num_key_value_heads": 128,
    "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "rms_norm_eps": 1e-06, "tie_word_embeddings": false, "topk_group": 4,
    "v_head_dim": 128, "vocab_size": 129280, "seq_length": 4096})"));
  const ModelSpec shipped = load_model_file(repo("configs/models/deepseek-v3.yaml"));
  CHECK(m.moe_router_num_groups == 8);
  CHECK(m.moe_router_group_topk == 4);
  CHECK(shipped.moe_router_num_groups == 8);
  CHECK(shipped.moe_router_group_topk == 4);
}
