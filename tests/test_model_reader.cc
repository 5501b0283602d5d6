// The model settings recipes state in Megatron-LM's words (config/model_reader, checks; issue
// 31): linear biases both ways, QK norms, RoPE base and scaling, and the router options.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config_support.h"
#include "workload/layer_ops.h"
#include "workload/moe_model.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

const std::string kTinyScenario =
    repo("scenarios/tiny.yaml");  // h = 1024, 16 heads, f = 4h, GPT-style

bool has_op(const std::vector<Op>& ops, const std::string& name) {
  for (const Op& op : ops) {
    if (op.name == name) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("add_bias_linear: both values, and the default trident assumed before", "[model]") {
  const double h = 1024, f = 4096;
  const ModelSpec gpt = load_scenario(kTinyScenario, {}).model;  // absent: GPT-style biases
  const ModelSpec with = load_scenario(kTinyScenario, {"model.add_bias_linear=true"}).model;
  const ModelSpec without = load_scenario(kTinyScenario, {"model.add_bias_linear=false"}).model;
  CHECK(layer_params(gpt) == layer_params(with));
  // QKV (3h), the projection (h), FC1 (f) and FC2 (h).
  CHECK(layer_params(with) - layer_params(without) == 3 * h + h + f + h);
  // A gated model: none unless given; given, FC1's 2f and FC2's h besides attention's 4h.
  const std::vector<std::string> llama = {"model.swiglu=true", "model.ffn_hidden_size=2816"};
  std::vector<std::string> biased = llama;
  biased.push_back("model.add_bias_linear=true");
  const ModelSpec plain = load_scenario(kTinyScenario, llama).model;
  const ModelSpec gated = load_scenario(kTinyScenario, biased).model;
  CHECK(layer_params(gated) - layer_params(plain) == 4 * h + 2 * 2816 + h);
  // Experts carry them only when given (Megatron-Core needs ETP 1 then).
  std::vector<std::string> experts = {"model.num_experts=8", "model.swiglu=true",
                                      "model.ffn_hidden_size=2816", "plan.sequence_parallel=true"};
  CHECK(routed_expert_params(load_scenario(kTinyScenario, experts).model) == 3 * h * 2816);
  experts.push_back("model.add_bias_linear=true");
  CHECK_THAT(load_error(kTinyScenario, experts),
             Catch::Contains("add_bias_linear with experts needs expert_tensor_parallel_size 1"));
  experts.insert(experts.end(),
                 {"plan.expert_tensor_parallel_size=1", "plan.expert_model_parallel_size=2",
                  "plan.moe_token_dispatcher_type=alltoall"});
  CHECK(routed_expert_params(load_scenario(kTinyScenario, experts).model) ==
        3 * h * 2816 + 2 * 2816 + h);
}

TEST_CASE("qk_layernorm: a kernel each way, weights and saved Q and K", "[model]") {
  const Scenario off = load_scenario(kTinyScenario, {"model.position_embedding=rope"});
  const Scenario on =
      load_scenario(kTinyScenario, {"model.position_embedding=rope", "model.qk_layernorm=true"});
  const LayerDims d = make_layer_dims(on.model, on.plan, GpuArchitecture::kHopper);
  CHECK(has_op(layer_forward_ops(d), "qk_norm"));
  CHECK(has_op(layer_backward_ops(d), "qk_norm_bwd"));
  CHECK_FALSE(has_op(layer_forward_ops(make_layer_dims(off.model, off.plan)), "qk_norm"));
  // LayerNorm: weight and bias over the head dimension (64), for Q and for K.
  CHECK(layer_params(on.model) - layer_params(off.model) == 4 * 64);
  // 16-bit Q and K (16 + 16 heads of 64) per token, split over t = 2: 2 x 2048 x 1024 / 2.
  CHECK(layer_activation_bytes(on.model, on.plan, GpuArchitecture::kHopper) -
            layer_activation_bytes(off.model, off.plan, GpuArchitecture::kHopper) ==
        Approx(2.0 * 2048 * 1024 / 2));
}

TEST_CASE("RoPE and router options are validated and change no work", "[model][moe]") {
  const std::vector<std::string> base = {"model.num_experts=8", "plan.sequence_parallel=true"};
  std::vector<std::string> set = base;
  set.insert(set.end(),
             {"model.rotary_base=1000000", "model.rotary_scaling_factor=40",
              "model.moe_router_score_function=sigmoid", "model.moe_router_enable_expert_bias=true",
              "model.moe_router_topk_scaling_factor=2.5", "model.moe_router_pre_softmax=true"});
  const Scenario a = load_scenario(kTinyScenario, base), b = load_scenario(kTinyScenario, set);
  CHECK(b.model.rotary_base == 1000000);
  CHECK(b.model.moe_router_score_function == "sigmoid");
  CHECK(b.model.moe_router_topk_scaling_factor == 2.5);
  const Workload wa = build_workload(a), wb = build_workload(b);
  CHECK(wa.stages[0].chunks[0].forward.compute_s == wb.stages[0].chunks[0].forward.compute_s);
  CHECK(wa.stages[0].memory.total() == wb.stages[0].memory.total());
  std::vector<std::string> bad = base;
  bad.push_back("model.moe_router_enable_expert_bias=true");
  CHECK_THAT(load_error(kTinyScenario, bad),
             Catch::Contains("moe_router_enable_expert_bias needs moe_router_score_function "
                             "sigmoid or sqrtsoftplus"));
  CHECK_THAT(load_error(kTinyScenario, {"model.moe_router_score_function=tanh"}),
             Catch::Contains("model.moe_router_score_function"));
  CHECK_THAT(load_error(kTinyScenario, {"model.rotary_scaling_factor=0.5"}),
             Catch::Contains("model.rotary_scaling_factor"));
}
