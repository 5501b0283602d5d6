// The combined 1F1B of overlap_moe_expert_parallel_comm (engine/combined_passes.cc): what it
// hides of the expert all-to-alls without pipelining, that it runs the interleaved schedule
// with fast and full fidelity agreeing, and the micro-batch more it keeps in flight. Each
// simulation runs in a child process.
#include <algorithm>
#include <catch2/catch.hpp>

#include "config/scenario.h"
#include "layout/program.h"
#include "sim_report.h"
#include "test_support.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

// 16 experts of 2048 over EP 16 (two A100 nodes per stage), top-2; no data-parallel overlap,
// so that the passes and the all-to-alls are all that changes.
Scenario overlap_scenario(int p, int v, int m, int hidden) {
  ModelSpec model = small_moe_model(16, 2, 2048, 1024);
  model.hidden_size = hidden;
  PlanSpec pl = plan(1, p, 16, 1, m, v > 1 ? ScheduleKind::kInterleaved1F1B : ScheduleKind::k1F1B);
  pl.virtual_stages = v;
  pl.expert_parallel = 16;
  pl.expert_tensor_parallel = 1;
  pl.moe_dispatcher = MoeDispatcher::kAllToAll;
  return scenario(a100_cluster(2 * p), model, pl);
}

}  // namespace

TEST_CASE("the combined 1F1B hides the all-to-alls of the steady state", "[engine][moe]") {
  // Without pipelining: forward 0 and backward m-1 run alone, each of the m-1 combined steps
  // runs both passes' compute with every all-to-all beside the other pass's compute. With
  // compute units longer than the all-to-alls (hidden 4096), the step exposes only the lone
  // passes' all-to-alls: 1/m of what the plain 1F1B exposes, and the step is shorter by the
  // rest.
  const int m = 4;
  Scenario sc = overlap_scenario(1, 1, m, 4096);
  const Report plain = simulate_report(sc, Fidelity::kFast);
  sc.plan.overlap_moe_expert_parallel_comm = true;
  const Report combined = simulate_report(sc, Fidelity::kFast);
  REQUIRE(plain.ep_comm_exposed_s > 0);
  CHECK(combined.ep_comm_exposed_s == Approx(plain.ep_comm_exposed_s / m).epsilon(1e-9));
  CHECK(combined.step_time_s ==
        Approx(plain.step_time_s - (plain.ep_comm_exposed_s - combined.ep_comm_exposed_s))
            .epsilon(1e-9));
  // Fast (one TP group per actor) and full (every GPU) agree.
  const Report full = simulate_report(sc, Fidelity::kFull);
  CHECK(full.step_time_s == Approx(combined.step_time_s).epsilon(0.01));
}

TEST_CASE("DeepEP's SMs slow the compute beside its all-to-alls", "[engine][moe]") {
  // The flex dispatcher (DeepEP, 20 of the A100's 108 SMs): the combined steps' compute runs
  // 108 / 88 times slower while an all-to-all is in flight; without overlap nothing runs
  // beside the all-to-alls.
  Scenario sc = overlap_scenario(1, 1, 4, 4096);
  sc.plan.moe_dispatcher = MoeDispatcher::kFlex;
  const Report plain = simulate_report(sc, Fidelity::kFast);
  sc.plan.overlap_moe_expert_parallel_comm = true;
  const Report combined = simulate_report(sc, Fidelity::kFast);
  // The slowdown counts as exposed EP time: the rest of the step is the plain 1F1B's.
  CHECK(combined.step_time_s < plain.step_time_s);
  CHECK(combined.step_time_s - combined.ep_comm_exposed_s ==
        Approx(plain.step_time_s - plain.ep_comm_exposed_s).epsilon(1e-9));
  // It is no more than what the held SMs cost over the all-to-alls it hid.
  sc.plan.moe_dispatcher = MoeDispatcher::kAllToAll;  // no SMs counted: everything hidden
  const Report nccl = simulate_report(sc, Fidelity::kFast);
  CHECK(combined.ep_comm_exposed_s > nccl.ep_comm_exposed_s);
}

TEST_CASE("the combined 1F1B runs the interleaved schedule", "[engine][moe]") {
  Scenario sc = overlap_scenario(2, 2, 8, 2048);
  const Report plain = simulate_report(sc, Fidelity::kFast);
  sc.plan.overlap_moe_expert_parallel_comm = true;
  const Report fast = simulate_report(sc, Fidelity::kFast);
  const Report full = simulate_report(sc, Fidelity::kFull);
  CHECK(fast.step_time_s < plain.step_time_s);
  CHECK(fast.ep_comm_exposed_s < plain.ep_comm_exposed_s);
  CHECK(fast.step_time_s == Approx(full.step_time_s).epsilon(0.01));
  // How the first stage's waits split between the all-to-alls and the pipeline receives
  // depends on which of two events at one instant wakes it first (about 3 % here); their
  // sum, and the step, do not.
  CHECK(fast.ep_comm_exposed_s == Approx(full.ep_comm_exposed_s).epsilon(0.05));
  // The extra warm-up forward starts one more micro-batch on every stage, but a combined step
  // frees the backward's layers as the forward keeps its own: the peak grows by one layer of
  // a chunk, not by a micro-batch.
  Scenario base = sc;
  base.plan.overlap_moe_expert_parallel_comm = false;
  const Workload with = build_workload(sc, build_programs(sc.plan));
  const Workload without = build_workload(base, build_programs(base.plan));
  for (size_t s = 0; s < with.stages.size(); ++s) {
    const StageWork& st = with.stages[s];
    const StageMemory& a = st.memory;
    const StageMemory& b = without.stages[s].memory;
    CHECK(a.microbatches_in_flight == b.microbatches_in_flight + 1);
    double layer = 0;  // the largest layer of a chunk of this stage
    for (const ChunkWork& c : st.chunks) {
      layer = std::max(layer, c.activation_bytes / std::max(1, c.num_layers));
    }
    CHECK(a.activations > b.activations);
    CHECK(a.activations <= b.activations + layer * (1 + 1e-12));
  }
}
