// Memory per GPU of routed experts under each data_parallel_sharding_strategy
// (workload/stage_work.cc): the dense weights shard over the d cp data-parallel group, the
// routed experts over the expert-data-parallel group (EDP = t cp d / (EP ETP)), each with its
// own gathered-layer and in-flight gradient buffers; and the per-layer gather units the
// passes carry for the engine.
#include <algorithm>
#include <catch2/catch.hpp>

#include "test_support.h"
#include "workload/moe_model.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

// 4 layers, hidden 2048, 16 experts of 2048 (top-2) in every layer; t = 2, p = 2, d = 8,
// EP 4 with whole experts (ETP 1): EDP = 2 x 8 / 4 = 4.
Scenario moe_scenario(DpSharding sharding) {
  ModelSpec m = small_moe_model();
  PlanSpec pl = plan(2, 2, 8, 1, 4, ScheduleKind::k1F1B);
  pl.expert_parallel = 4;
  pl.expert_tensor_parallel = 1;
  pl.sequence_parallel = true;
  pl.moe_dispatcher = MoeDispatcher::kAllToAll;
  pl.dp_sharding = sharding;
  pl.distributed_optimizer = sharding != DpSharding::kNoShard;
  pl.overlap_grad_reduce = pl.shards_gradients();
  return scenario(a100_cluster(4), m, pl);
}

// The last stage's parameters per GPU: its two MoE layers' dense units U (attention, router,
// norms, split over t = 2), their 4 whole experts each (Xl), the final norm and the output
// layer's copy of the embedding (split over t).
struct Split {
  double unit, experts_per_layer, dense, experts;
};
Split last_stage_split(const ModelSpec& m) {
  Split s;
  s.unit = (attention_params(m) + router_params(m) + 2 * 2 * m.hidden_size) / 2;
  s.experts_per_layer = 16 / 4 * 3.0 * m.hidden_size * m.moe_ffn_hidden_size;
  s.dense = 2 * s.unit + 2 * m.hidden_size + double(m.vocab_size) * m.hidden_size / 2;
  s.experts = 2 * s.experts_per_layer;
  return s;
}

}  // namespace

TEST_CASE("expert weights gradients and optimizer state shard over the expert-data group",
          "[moe][memory]") {
  const Split s = last_stage_split(moe_scenario(DpSharding::kNoShard).model);
  REQUIRE(s.experts_per_layer == 4 * 3.0 * 2048 * 2048);
  const double D = s.dense, X = s.experts, U = s.unit, Xl = s.experts_per_layer;
  const double d = 8, edp = 4, bucket = 40e6;  // Megatron's max(40M, 1M x d)
  REQUIRE(bucket < D);
  REQUIRE(bucket < X);
  struct Case {
    DpSharding sharding;
    double weights, gradients, optimizer;
  };
  // bf16 weights (2 B), fp32 gradients (4 B), Adam state 12 B per parameter.
  const Case cases[] = {
      {DpSharding::kNoShard, 2 * (D + X), 4 * (D + X), 12 * (D + X)},
      {DpSharding::kOptim, 2 * (D + X), 4 * (D + X), 12 * D / d + 12 * X / edp},
      // ZeRO-2: each group's own bucket in flight, unsharded.
      {DpSharding::kOptimGrads, 2 * (D + X), 4 * D / d + 4 * bucket + 4 * X / edp + 4 * bucket,
       12 * D / d + 12 * X / edp},
      // ZeRO-3: the layer in use and the prefetched one gathered whole (dense unit and its
      // experts), and one layer's gradients unsharded.
      {DpSharding::kOptimGradsParams, 2 * D / d + 2 * 2 * U + 2 * X / edp + 2 * 2 * Xl,
       4 * D / d + 4 * U + 4 * X / edp + 4 * Xl, 12 * D / d + 12 * X / edp},
  };
  for (const Case& c : cases) {
    const Scenario sc = moe_scenario(c.sharding);
    CAPTURE(static_cast<int>(c.sharding));
    REQUIRE(sc.plan.expert_data_parallel() == 4);
    const Workload w = build_workload(sc);
    const StageWork& st = w.stages[1];
    REQUIRE(st.expert_params_per_gpu == Approx(X).epsilon(1e-12));
    REQUIRE(st.params_per_gpu == Approx(D + X).epsilon(1e-12));
    CHECK(st.memory.weights == Approx(c.weights).epsilon(1e-12));
    CHECK(st.memory.gradients == Approx(c.gradients).epsilon(1e-12));
    CHECK(st.memory.optimizer == Approx(c.optimizer).epsilon(1e-12));
  }
}

TEST_CASE("bf16 gradient reduction keeps fp32 main gradients of the expert shard too",
          "[moe][memory]") {
  Scenario sc = moe_scenario(DpSharding::kOptimGradsParams);
  sc.plan.grad_reduce_in_bf16 = true;
  const Split s = last_stage_split(sc.model);
  const double D = s.dense, X = s.experts, U = s.unit, Xl = s.experts_per_layer;
  const StageWork& st = build_workload(sc).stages[1];
  // bf16 gradients (2 B) and their buffers; 4 B per parameter of each shard during the
  // optimizer step, beyond what the activations held before it.
  CHECK(st.memory.step_main_grads == Approx(4 * D / 8 + 4 * X / 4).epsilon(1e-12));
  const double excess = std::max(0.0, st.memory.step_main_grads - st.memory.activations -
                                          st.memory.cp_buffers - st.memory.dispatch_buffers);
  CHECK(st.memory.gradients ==
        Approx(2 * D / 8 + 2 * U + 2 * X / 4 + 2 * Xl + excess).epsilon(1e-12));
}

TEST_CASE("sharded weights: each MoE layer gathers its dense unit then its experts",
          "[moe][memory]") {
  const Scenario sc = moe_scenario(DpSharding::kOptimGradsParams);
  const Split s = last_stage_split(sc.model);
  const StageWork& st = build_workload(sc).stages[1];
  // Every layer's unit reduce-scatters as its backward ends: dense over d, experts over EDP.
  CHECK(st.grad_bucket_params == Approx(s.unit).epsilon(1e-12));
  CHECK(st.expert_grad_bucket_params == Approx(s.experts_per_layer).epsilon(1e-12));
  for (const Pass* pass : {&st.chunks[0].forward, &st.chunks[0].backward}) {
    double dense = 0, experts = 0;
    int expert_units = 0;
    for (const Segment& seg : pass->segments) {
      dense += seg.weight_params;
      experts += seg.expert_weight_params;
      if (seg.expert_weight_params > 0) {
        ++expert_units;
        CHECK(seg.expert_weight_params == Approx(s.experts_per_layer).epsilon(1e-12));
      }
    }
    CHECK(expert_units == 2);
    CHECK(dense == Approx(s.dense).epsilon(1e-12));
    CHECK(experts == Approx(s.experts).epsilon(1e-12));
  }
  // With EP = 1 and ETP = t the experts travel with the dense weights: no expert units.
  Scenario together = sc;
  together.plan.expert_parallel = 1;
  together.plan.expert_tensor_parallel = 2;
  const StageWork& tw = build_workload(together).stages[1];
  CHECK(tw.expert_params_per_gpu == 0);
  for (const Segment& seg : tw.chunks[0].forward.segments) CHECK(seg.expert_weight_params == 0);
}
