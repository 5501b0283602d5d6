// Routed experts under ZeRO-2 / ZeRO-3 on SimGrid (lowering/param_gathers, the kExpertGather
// and expert-bucket collectives): the per-layer expert gathers over the expert-data-parallel
// group, fast against full fidelity, and what the gathers and reduce-scatters cost. Each
// simulation runs in a child process.
#include <catch2/catch.hpp>
#include <sstream>
#include <string>

#include "core/isolated_run.h"
#include "engine/simulator.h"
#include "layout/program.h"
#include "lowering/param_gathers.h"
#include "lowering/shortcuts.h"
#include "sim_report.h"
#include "test_support.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

// A small SwiGLU MoE: 4 layers, hidden 2048, 16 experts of 2048, top-2 in every layer, on
// 2-stage pipelines with 4 micro-batches.
Scenario moe_scenario(int nodes, int t, int d, int ep, int etp, DpSharding sharding) {
  ModelSpec m = small_moe_model();
  PlanSpec pl = plan(t, 2, d, 1, 4, ScheduleKind::k1F1B);
  pl.expert_parallel = ep;
  pl.expert_tensor_parallel = etp;
  pl.sequence_parallel = t > 1;
  pl.moe_dispatcher = MoeDispatcher::kAllToAll;
  pl.dp_sharding = sharding;
  pl.distributed_optimizer = sharding != DpSharding::kNoShard;
  pl.overlap_grad_reduce = true;
  return scenario(a100_cluster(nodes), m, pl);
}

}  // namespace

TEST_CASE("an FSDP unit gathers its dense weights then its experts and waits for both",
          "[param_gathers][moe]") {
  Pass pass;
  for (int l = 0; l < 2; ++l) {
    Segment seg;
    seg.compute_s = 1;
    seg.weight_params = 10;
    seg.expert_weight_params = 30;
    pass.segments.push_back(seg);
    pass.segments.push_back(Segment{});  // the layer's later segments need no weights
  }
  const GatherSchedule g = layer_gathers(pass);
  CHECK(g.unit_params == std::vector<double>{10, 30, 10, 30});
  CHECK(g.expert == std::vector<char>{0, 1, 0, 1});
  CHECK(g.waits[0] == std::vector<int>{1, -1, 3, -1});
}

TEST_CASE("expert buckets are gathered behind the forward after the dense ones they follow",
          "[param_gathers][moe]") {
  // Two layers of 10 dense and 30 expert parameters; dense buckets of 20 hold both layers,
  // expert buckets of 30 one layer each. Layer 0 waits for the dense bucket and its experts,
  // layer 1 for its own experts only.
  StageWork st;
  st.expert_grad_bucket_params = 30;
  st.chunks.resize(1);
  for (int l = 0; l < 2; ++l) {
    Segment f;
    f.compute_s = 1;
    f.weight_params = 10;
    f.expert_weight_params = 30;
    st.chunks[0].forward.segments.push_back(f);
    Segment b;
    b.compute_s = 2;
    b.grad_params = 10;
    b.expert_grad_params = 30;
    st.chunks[0].backward.segments.push_back(b);
  }
  const GatherSchedule g = bucket_gathers(st, 20);
  CHECK(g.unit_params == std::vector<double>{20, 30, 30});
  CHECK(g.expert == std::vector<char>{0, 1, 1});
  CHECK(g.waits[0] == std::vector<int>{1, 2});
}

TEST_CASE("fast and full fidelity agree with experts under ZeRO-2 and ZeRO-3",
          "[engine][moe][fidelity]") {
  struct Case {
    const char* name;
    int nodes, t, d, ep, etp;
  };
  // 4 nodes of 8 GPUs, 16 per stage. ETP 1: EP 4 over TP x data in a node, EDP 4 across the
  // two nodes of a stage; ETP = t = 1: EP 8 in a node, EDP 2 across nodes. On 8 nodes, EP 16
  // spans two nodes: fast mode collapses the all-to-all's cross-node flows per NIC under
  // ZeRO-1, not with sharded gradients, whose traffic meets it on the NICs in every pass.
  const Case cases[] = {
      {"ETP 1: EP 4 inside TP x data and EDP 4 across nodes", 4, 2, 8, 4, 1},
      {"EP 8 in a node and EDP 2 across nodes", 4, 1, 16, 8, 1},
      {"ETP 1: EP 16 over two nodes and EDP 2", 8, 2, 16, 16, 1},
  };
  for (const Case& c : cases) {
    for (DpSharding sharding :
         {DpSharding::kOptim, DpSharding::kOptimGrads, DpSharding::kOptimGradsParams}) {
      INFO(c.name << ", strategy " << static_cast<int>(sharding));
      Scenario sc = moe_scenario(c.nodes, c.t, c.d, c.ep, c.etp, sharding);
      // ZeRO-1 with the expert buckets gathered behind the forward (overlap_param_gather).
      sc.plan.overlap_param_gather = true;
      REQUIRE(sc.plan.expert_data_parallel() > 1);
      if (c.ep == 16) {
        CHECK(decide_shortcuts(sc, Fidelity::kFast).nic_all_to_all.taken ==
              !sc.plan.shards_gradients());
      }
      const Report fast = simulate_report(sc, Fidelity::kFast);
      const Report full = simulate_report(sc, Fidelity::kFull);
      CHECK(fast.step_time_s == Approx(full.step_time_s).epsilon(0.01));
      CHECK(fast.dp_comm_exposed_s == Approx(full.dp_comm_exposed_s).epsilon(0.05));
      CHECK(fast.dp_comm_exposed_s > 0);
      CHECK(fast.ep_comm_exposed_s > 0);
      CHECK(fast.dp_param_gather_exposed_s > 0);
    }
  }
}

TEST_CASE("ZeRO-3 gathers every MoE layer's experts before its forward and its backward",
          "[engine][moe]") {
  // ETP 1, EP 4, EDP 4: stage 0 holds layers 0 and 1; each of its 4 micro-batches gathers both
  // layers' experts twice (forward and backward), each gather one layer's 4 whole experts in
  // bf16 over the expert-data-parallel group.
  const Scenario sc = moe_scenario(4, 2, 8, 4, 1, DpSharding::kOptimGradsParams);
  const std::string text = run_isolated([&]() {
    const Workload w = build_workload(sc);
    SimOptions opt;
    const Timeline tl = simulate_step(sc, w, build_programs(sc.plan), opt);
    const double bytes = 2 * w.stages[0].expert_params_per_gpu / 2;  // one layer's, bf16
    int gathers = 0;
    for (const Interval& iv : tl.actors.front().intervals) {
      if (iv.kind == IntervalKind::kDpComm && iv.op == CollectiveOp::kAllGather &&
          iv.microbatch < 0 && iv.bytes == bytes) {
        ++gathers;
      }
    }
    std::ostringstream out;
    out << tl.actors.front().stage << " " << gathers;
    return out.str();
  });
  std::istringstream in(text);
  int stage = -1, gathers = 0;
  in >> stage >> gathers;
  CHECK(stage == 0);
  CHECK(gathers == 4 * 2 * 2);
}

TEST_CASE("sharding experts costs step time and the expert gathers show as exposed DP time",
          "[engine][moe]") {
  // Same layout: ZeRO-1 keeps the weights whole; ZeRO-2 reduce-scatters every micro-batch's
  // gradients; ZeRO-3 also gathers every layer twice per micro-batch.
  const Report zero1 =
      simulate_report(moe_scenario(4, 2, 8, 4, 1, DpSharding::kOptim), Fidelity::kFast);
  const Report zero3 =
      simulate_report(moe_scenario(4, 2, 8, 4, 1, DpSharding::kOptimGradsParams), Fidelity::kFast);
  CHECK(zero1.dp_param_gather_exposed_s == 0);
  CHECK(zero3.dp_param_gather_exposed_s > 0);
  CHECK(zero3.step_time_s > zero1.step_time_s);
}
