// The plan settings recipes state in Megatron-LM's words (config/plan_reader, checks; issue
// 31): Megatron-Core FSDP, derived values checked against trident's, forced load balancing,
// the flex backend, grouped GEMMs, p2p overlap, activation offloading and the optimizer_offload
// name.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config_support.h"

using namespace trident;
using namespace trident::testing;

namespace {

const std::string kTinyScenario = repo("scenarios/tiny.yaml");  // t=2 p=2 d=2, 8 micro-batches

// The tiny scenario with 8 experts (sequence parallel) and `more`.
std::vector<std::string> moe(std::vector<std::string> more) {
  std::vector<std::string> s = {"model.num_experts=8", "plan.sequence_parallel=true"};
  s.insert(s.end(), more.begin(), more.end());
  return s;
}

}  // namespace

TEST_CASE("fsdp is Megatron-Core FSDP: optim_grads_params unless the strategy is given",
          "[plan][fsdp]") {
  CHECK(load_scenario(kTinyScenario, {"plan.fsdp=true"}).plan.dp_sharding ==
        DpSharding::kOptimGradsParams);
  CHECK(load_scenario(kTinyScenario, {"plan.use_megatron_fsdp=true"}).plan.dp_sharding ==
        DpSharding::kOptimGradsParams);
  CHECK(
      load_scenario(kTinyScenario, {"plan.fsdp=true", "plan.data_parallel_sharding_strategy=optim"})
          .plan.dp_sharding == DpSharding::kOptim);
  CHECK(load_scenario(kTinyScenario, {"plan.fsdp=false"}).plan.dp_sharding == DpSharding::kNoShard);
  CHECK(load_scenario(kTinyScenario, {"plan.fsdp=false", "plan.distributed_optimizer=true"})
            .plan.dp_sharding == DpSharding::kOptim);
  CHECK_THAT(load_error(kTinyScenario, {"plan.fsdp=false",
                                        "plan.data_parallel_sharding_strategy=optim_grads_params"}),
             Catch::Contains("plan.fsdp: false contradicts data_parallel_sharding_strategy "
                             "optim_grads_params"));
  CHECK_THAT(load_error(kTinyScenario, {"plan.fsdp=true", "plan.distributed_optimizer=false"}),
             Catch::Contains("false contradicts fsdp true"));
}

TEST_CASE("derived values a recipe states must equal trident's", "[plan]") {
  // t cp d / (EP ETP) = 2 x 1 x 2 / (2 x 2) = 1; num_microbatches 8.
  const Scenario ok = load_scenario(
      kTinyScenario, moe({"plan.expert_model_parallel_size=2", "plan.expert_data_parallel=1",
                          "plan.gradient_accumulation=8"}));
  CHECK(ok.plan.num_microbatches == 8);
  CHECK_THAT(
      load_error(kTinyScenario,
                 moe({"plan.expert_model_parallel_size=2", "plan.expert_data_parallel=2"})),
      Catch::Contains("plan.expert_data_parallel: expert_data_parallel 2 differs from "
                      "tensor_parallel × context_parallel × data_parallel / "
                      "(expert_model_parallel_size × expert_tensor_parallel_size) = 2 × 1 × 2 / "
                      "(2 × 2) = 1"));
  CHECK_THAT(load_error(kTinyScenario, {"plan.gradient_accumulation=4"}),
             Catch::Contains("plan.gradient_accumulation: gradient_accumulation 4 differs from "
                             "num_microbatches = global_batch_size / (micro_batch_size × "
                             "data_parallel) = 8"));
}

TEST_CASE("forced load balancing is balanced routing", "[plan][moe]") {
  const Scenario sc =
      load_scenario(kTinyScenario, moe({"plan.moe_router_force_load_balancing=true"}));
  CHECK(sc.plan.moe_load_imbalance == 1);
  CHECK_THAT(load_error(kTinyScenario, moe({"plan.moe_router_force_load_balancing=true",
                                            "plan.moe_expert_load_imbalance=1.5"})),
             Catch::Contains("moe_expert_load_imbalance 1.5 contradicts "
                             "moe_router_force_load_balancing true"));
}

TEST_CASE("flex backend, grouped GEMMs and the optimizer_offload name are read", "[plan][moe]") {
  const Scenario deepep = load_scenario(kTinyScenario, moe({}));
  CHECK(deepep.plan.moe_flex_backend == MoeFlexBackend::kDeepEp);
  CHECK(deepep.plan.moe_grouped_gemm);
  const Scenario hybrid = load_scenario(
      kTinyScenario,
      moe({"plan.moe_flex_dispatcher_backend=hybridep", "plan.moe_grouped_gemm=false"}));
  CHECK(hybrid.plan.moe_flex_backend == MoeFlexBackend::kHybridEp);
  CHECK_FALSE(hybrid.plan.moe_grouped_gemm);
  CHECK_THAT(load_error(kTinyScenario, moe({"plan.moe_flex_dispatcher_backend=ncclep"})),
             Catch::Contains("plan.moe_flex_dispatcher_backend"));
  // optimizer_offload is optimizer_cpu_offload: its own requirements apply.
  CHECK_THAT(load_error(kTinyScenario, {"plan.optimizer_offload=true"}),
             Catch::Contains("optimizer_cpu_offload needs use_precision_aware_optimizer"));
}

TEST_CASE("overlap_p2p_comm false is refused only where it would block", "[plan]") {
  CHECK(load_scenario(kTinyScenario, {"plan.overlap_p2p_comm=false"}).plan.virtual_stages == 1);
  CHECK_THAT(load_error(kTinyScenario, {"plan.overlap_p2p_comm=false", "plan.virtual_stages=2"}),
             Catch::Contains("plan.overlap_p2p_comm: false with virtual_stages 2 is not "
                             "modelled"));
}

TEST_CASE("activation offload modules are checked by name and need the host links", "[plan]") {
  // tiny-2node declares no cluster.host.
  CHECK_THAT(load_error(kTinyScenario, moe({"plan.activation_offload=[expert_fc1]"})),
             Catch::Contains("plan.activation_offload: activation_offload needs the host links"));
  CHECK_THAT(load_error(kTinyScenario, moe({"plan.activation_offload=[attn_norm]"})),
             Catch::Contains("`attn_norm` is a Megatron-Core module trident does not model"));
  CHECK_THAT(load_error(kTinyScenario, moe({"plan.activation_offload=[fc1]"})),
             Catch::Contains("`fc1` is not a module name (expected expert_fc1, moe_act)"));
}
