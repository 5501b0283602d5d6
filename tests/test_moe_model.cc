// Mixtures of experts and multi-latent attention (workload/moe_model): the shipped MoE models'
// published parameter and active-parameter counts, Megatron-LM's model FLOPs, the layer
// pattern (moe_layer_freq, first_k_dense_replace).
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "config_support.h"
#include "workload/moe_model.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

ModelSpec shipped(const std::string& name) {
  return load_model_file(repo("configs/models/" + name + ".yaml"));
}

}  // namespace

TEST_CASE("shipped MoE models have their published total and active parameters", "[moe]") {
  struct Published {
    const char* file;
    double total, active;  // billions, as the model card or paper prints them
  };
  // The figures are printed to a last digit, rounded (Mixtral's 12.88B as 12.9B) or truncated
  // (DeepSeek-V3's 37.55B as 37B, Qwen3-30B-A3B's 3.35B as 3.3B): a count printed P with a
  // last digit of u lies in [P - u/2, P + u); allowed 1 % beyond that interval.
  const auto printed_as = [](double billions, double printed, double unit) {
    return billions >= (printed - unit / 2) * 0.99 && billions < (printed + unit) * 1.01;
  };
  const Published models[] = {
      {"mixtral-8x7b", 46.7, 12.9},  // Jiang et al. 2024, Mixtral of Experts
      {"mixtral-8x22b", 141, 39},    // Mistral AI model card
      {"qwen3-30b-a3b", 30.5, 3.3},  // Qwen3 Technical Report, Table 2
      {"qwen3-235b-a22b", 235, 22},  // Qwen3 Technical Report, Table 2
      {"deepseek-v3", 671, 37},      // DeepSeek-V3 Technical Report (MTP excluded)
      {"llama4-maverick", 400, 17},  // Meta model card, text model
  };
  for (const Published& p : models) {
    INFO(p.file);
    const ModelSpec m = shipped(p.file);
    CHECK(m.moe());
    const double unit_total = p.total >= 100 ? 1 : 0.1;
    const double unit_active = p.active >= 10 ? 1 : 0.1;
    CHECK(printed_as(model_params(m) / 1e9, p.total, unit_total));
    CHECK(printed_as(active_params(m) / 1e9, p.active, unit_active));
    CHECK(model_params(m) / 1e9 == Approx(p.total).epsilon(0.01));  // totals: within 1 %
  }
}

TEST_CASE("a dense model's active parameters are all of them", "[moe]") {
  const ModelSpec m = shipped("llama3-8b");
  CHECK_FALSE(m.moe());
  CHECK(moe_layer_count(m) == 0);
  CHECK(active_params(m) == model_params(m));
}

TEST_CASE("MoE layer patterns: every layer, first k dense, an explicit list", "[moe]") {
  const ModelSpec ds = shipped("deepseek-v3");
  CHECK(moe_layer_count(ds) == 58);
  CHECK_FALSE(ds.is_moe_layer(2));
  CHECK(ds.is_moe_layer(3));
  const ModelSpec maverick = shipped("llama4-maverick");
  CHECK(moe_layer_count(maverick) == 24);
  CHECK_FALSE(maverick.is_moe_layer(0));
  CHECK(maverick.is_moe_layer(1));
  CHECK(moe_layer_count(shipped("mixtral-8x7b")) == 32);
  // An integer N: layers 0, N, 2N, ... (Megatron's --moe-layer-freq).
  const Scenario sc = load_scenario(
      repo("scenarios/tiny.yaml"),
      {"model.num_experts=4", "model.moe_layer_freq=2", "plan.sequence_parallel=true"});
  for (int l = 0; l < sc.model.num_layers; ++l) CHECK(sc.model.is_moe_layer(l) == (l % 2 == 0));
}

TEST_CASE("DeepSeek-V3's MLA and expert weights per layer", "[moe]") {
  const ModelSpec m = shipped("deepseek-v3");
  const double h = 7168, a = 128;
  // q: 7168 x 1536 down, a norm of 1536, 1536 x 128 x 192 up; kv: 7168 x 576 down, a norm of
  // 512, 512 x 128 x 256 up; output 128 x 128 x 7168.
  const double q = h * 1536 + 1536 + 1536 * a * 192;
  const double kv = h * 576 + 512 + 512 * a * 256;
  CHECK(attention_params(m) == q + kv + a * 128 * h);
  CHECK(routed_expert_params(m) == 3 * h * 2048);
  CHECK(moe_mlp_params(m) == h * 256 + 257 * 3 * h * 2048);  // router, 256 routed + 1 shared
  CHECK(moe_active_mlp_params(m) == h * 256 + 9 * 3 * h * 2048);
}

TEST_CASE("model FLOPs are Megatron-LM's num_floating_point_operations", "[moe]") {
  // Evaluated by hand from megatron/training/training.py (MoE terms, GQA with the causal half
  // of the scores, MLA's projection and core terms, logits) for one sequence of 4096.
  CHECK(megatron_model_flops(shipped("mixtral-8x7b"), 1) ==
        Approx(326477644038144.0).epsilon(1e-12));
  CHECK(megatron_model_flops(shipped("deepseek-v3"), 1) ==
        Approx(1023230173249536.0).epsilon(1e-12));
  // Linear in the batch.
  const ModelSpec q = shipped("qwen3-30b-a3b");
  CHECK(megatron_model_flops(q, 8) == Approx(8 * megatron_model_flops(q, 1)).epsilon(1e-15));
}
