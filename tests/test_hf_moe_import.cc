// Hugging Face config.json files of mixtures of experts (config/hf_moe_import): Mixtral,
// Qwen3 MoE, DeepSeek-V3 (MLA, shared expert, first dense layers) and Llama 4 (text_config,
// interleaved MoE layers), from the fields of their published configs.
#include <catch2/catch.hpp>
#include <string>

#include "config_support.h"
#include "workload/moe_model.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

ModelSpec import(const std::string& name, const std::string& json) {
  return load_model_file(write_temp(name + "/config.json", json));
}

}  // namespace

TEST_CASE("Mixtral's config.json imports as the shipped model", "[hf][moe]") {
  // mistralai/Mixtral-8x7B-v0.1 config.json (fields that matter).
  const ModelSpec m = import("Mixtral-8x7B-v0.1", R"({
    "architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_act": "silu",
    "hidden_size": 4096, "intermediate_size": 14336, "max_position_embeddings": 32768,
    "num_attention_heads": 32, "num_experts_per_tok": 2, "num_hidden_layers": 32,
    "num_key_value_heads": 8, "num_local_experts": 8, "rms_norm_eps": 1e-05,
    "rope_theta": 1000000.0, "tie_word_embeddings": false, "vocab_size": 32000,
    "seq_length": 4096})");
  const ModelSpec shipped = load_model_file(repo("configs/models/mixtral-8x7b.yaml"));
  CHECK(m.num_experts == 8);
  CHECK(m.moe_router_topk == 2);
  CHECK(moe_layer_count(m) == 32);
  CHECK(model_params(m) == model_params(shipped));
  CHECK(active_params(m) == active_params(shipped));
}

TEST_CASE("Qwen3 MoE: head_dim, moe_intermediate_size, decoder_sparse_step, mlp_only_layers",
          "[hf][moe]") {
  // Qwen/Qwen3-30B-A3B config.json.
  const std::string qwen = R"({
    "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe",
    "decoder_sparse_step": 1, "head_dim": 128, "hidden_act": "silu", "hidden_size": 2048,
    "intermediate_size": 6144, "max_position_embeddings": 40960, "mlp_only_layers": [],
    "moe_intermediate_size": 768, "num_attention_heads": 32, "num_experts": 128,
    "num_experts_per_tok": 8, "num_hidden_layers": 48, "num_key_value_heads": 4,
    "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "tie_word_embeddings": false,
    "vocab_size": 151936, "seq_length": 4096)";
  const ModelSpec m = import("Qwen3-30B-A3B", qwen + "}");
  const ModelSpec shipped = load_model_file(repo("configs/models/qwen3-30b-a3b.yaml"));
  CHECK(m.kv_channels == 128);
  CHECK(m.moe_ffn_hidden_size == 768);
  CHECK(model_params(m) == model_params(shipped));
  CHECK(active_params(m) == active_params(shipped));
  // Qwen2-MoE style: every second layer sparse ((i + 1) % 2 == 0), layer 5 forced dense, and
  // a shared expert.
  std::string sparse = qwen;
  sparse.replace(sparse.find("\"decoder_sparse_step\": 1"), 24, "\"decoder_sparse_step\": 2");
  sparse.replace(sparse.find("\"mlp_only_layers\": []"), 21, "\"mlp_only_layers\": [5]");
  const ModelSpec s =
      import("qwen-sparse", sparse + R"(, "shared_expert_intermediate_size": 5632})");
  CHECK_FALSE(s.is_moe_layer(0));
  CHECK(s.is_moe_layer(1));
  CHECK_FALSE(s.is_moe_layer(5));
  CHECK(moe_layer_count(s) == 23);
  CHECK(s.moe_shared_expert_intermediate_size == 5632);
}

TEST_CASE("DeepSeek-V3: MLA, routed and shared experts, first dense layers", "[hf][moe]") {
  // deepseek-ai/DeepSeek-V3 config.json.
  const ModelSpec m = import("DeepSeek-V3", R"({
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
    "first_k_dense_replace": 3, "hidden_act": "silu", "hidden_size": 7168,
    "intermediate_size": 18432, "kv_lora_rank": 512, "max_position_embeddings": 163840,
    "moe_intermediate_size": 2048, "moe_layer_freq": 1, "n_routed_experts": 256,
    "n_shared_experts": 1, "num_attention_heads": 128, "num_experts_per_tok": 8,
    "num_hidden_layers": 61, "num_key_value_heads": 128, "num_nextn_predict_layers": 1,
    "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
    "rms_norm_eps": 1e-06, "rope_theta": 10000, "tie_word_embeddings": false,
    "v_head_dim": 128, "vocab_size": 129280, "seq_length": 4096})");
  const ModelSpec shipped = load_model_file(repo("configs/models/deepseek-v3.yaml"));
  CHECK(m.multi_latent_attention);
  CHECK(m.q_lora_rank == 1536);
  CHECK(m.qk_pos_emb_head_dim == 64);
  CHECK(m.moe_shared_expert_intermediate_size == 2048);
  CHECK(moe_layer_count(m) == 58);
  CHECK(m.mtp_num_layers == 1);  // num_nextn_predict_layers
  CHECK(shipped.mtp_num_layers == 1);
  CHECK(model_params(m) == model_params(shipped));
  CHECK(active_params(m) == active_params(shipped));
}

TEST_CASE("Llama 4: text_config, interleaved MoE layers, shared expert", "[hf][moe]") {
  // meta-llama/Llama-4-Maverick-17B-128E config.json (its text_config).
  const ModelSpec m = import("Llama-4-Maverick", R"({
    "architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
    "text_config": {"model_type": "llama4_text", "head_dim": 128, "hidden_act": "silu",
      "hidden_size": 5120, "interleave_moe_layer_step": 2, "intermediate_size": 8192,
      "intermediate_size_mlp": 16384, "max_position_embeddings": 1048576,
      "num_attention_heads": 40, "num_experts_per_tok": 1, "num_hidden_layers": 48,
      "num_key_value_heads": 8, "num_local_experts": 128, "rms_norm_eps": 1e-05,
      "rope_theta": 500000.0, "tie_word_embeddings": false, "vocab_size": 202048,
      "seq_length": 8192},
    "tie_word_embeddings": false})");
  const ModelSpec shipped = load_model_file(repo("configs/models/llama4-maverick.yaml"));
  CHECK(m.num_experts == 128);
  CHECK(m.ffn_hidden_size == 16384);
  CHECK(m.moe_ffn_hidden_size == 8192);
  CHECK(m.moe_shared_expert_intermediate_size == 8192);
  CHECK(moe_layer_count(m) == 24);
  CHECK(model_params(m) == model_params(shipped));
  CHECK(active_params(m) == active_params(shipped));
}
