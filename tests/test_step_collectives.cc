// The step simulation's collectives (engine/step_collectives) under the overlap settings: TP
// chunks beside GEMMs (tp_comm_overlap), the distributed optimizer's gathers behind the
// forward (overlap_param_gather) and sharded data parallelism, each fast against full
// fidelity (within 1 %) and against the plain step. Every simulation runs in a child process.
#include <catch2/catch.hpp>
#include <sstream>

#include "core/isolated_run.h"
#include "engine/simulator.h"
#include "layout/program.h"
#include "report/metrics.h"
#include "sim_report.h"
#include "test_support.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

Report simulate(const Scenario& sc, Fidelity fidelity) { return simulate_report(sc, fidelity); }

void check_agree(const Scenario& sc) {
  const Report fast = simulate(sc, Fidelity::kFast);
  const Report full = simulate(sc, Fidelity::kFull);
  CHECK(fast.step_time_s == Approx(full.step_time_s).epsilon(0.01));
  CHECK(fast.tp_comm_exposed_s == Approx(full.tp_comm_exposed_s).epsilon(0.01).margin(1e-5));
  CHECK(fast.dp_comm_exposed_s == Approx(full.dp_comm_exposed_s).epsilon(0.01).margin(1e-5));
}

}  // namespace

TEST_CASE("tp_comm_overlap hides TP time and fast and full fidelity agree",
          "[engine][tp_overlap]") {
  Scenario sc = scenario(a100_cluster(2), gpt_model(4, 4096, 32, 2048, 32000),
                         plan(8, 1, 2, 1, 2, ScheduleKind::k1F1B));
  sc.cluster.gpu.architecture = GpuArchitecture::kAmpere;
  sc.plan.sequence_parallel = true;
  const Report plain = simulate(sc, Fidelity::kFast);
  sc.plan.tp_comm_overlap = true;
  const Report overlapped = simulate(sc, Fidelity::kFast);
  CHECK(overlapped.tp_comm_exposed_s < 0.8 * plain.tp_comm_exposed_s);
  CHECK(overlapped.step_time_s < plain.step_time_s);
  check_agree(sc);
  // With pipeline stages too (simulated TP collectives beside the pipeline's flows).
  sc = scenario(a100_cluster(2), gpt_model(4, 2048, 16, 1024, 32000),
                plan(4, 2, 2, 1, 4, ScheduleKind::k1F1B));
  sc.plan.sequence_parallel = true;
  sc.plan.tp_comm_overlap = true;
  check_agree(sc);
}

TEST_CASE("overlap_param_gather hides the distributed optimizer's all-gather",
          "[engine][dp_overlap]") {
  Scenario sc = scenario(a100_cluster(4), gpt_model(8, 2048, 16, 1024, 32000),
                         plan(8, 1, 4, 1, 2, ScheduleKind::k1F1B));
  sc.plan.distributed_optimizer = true;
  sc.plan.dp_sharding = DpSharding::kOptim;
  sc.plan.overlap_grad_reduce = true;
  sc.plan.grad_bucket_size = 10000000;
  const Report plain = simulate(sc, Fidelity::kFast);
  sc.plan.overlap_param_gather = true;
  const Report overlapped = simulate(sc, Fidelity::kFast);
  CHECK(overlapped.dp_comm_exposed_s < plain.dp_comm_exposed_s);
  CHECK(overlapped.step_time_s < plain.step_time_s);
  // What stays exposed waits on the first buckets, and is all counted as DP.
  CHECK(overlapped.dp_param_gather_exposed_s > 0);
  CHECK(overlapped.dp_param_gather_exposed_s <= overlapped.dp_comm_exposed_s);
  check_agree(sc);
}

TEST_CASE("sharded gradients and weights: fast and full fidelity agree", "[engine][dp_sharding]") {
  for (DpSharding s : {DpSharding::kOptimGrads, DpSharding::kOptimGradsParams}) {
    Scenario sc = scenario(a100_cluster(4), gpt_model(4, 2048, 16, 1024, 32000),
                           plan(4, 2, 4, 1, 2, ScheduleKind::k1F1B));
    sc.plan.distributed_optimizer = true;
    sc.plan.dp_sharding = s;
    INFO(dp_sharding_name(s));
    const Report fast = simulate(sc, Fidelity::kFast);
    // Per-layer gathers run before every pass: some of them wait.
    if (s == DpSharding::kOptimGradsParams) CHECK(fast.dp_param_gather_exposed_s > 0);
    check_agree(sc);
  }
}

TEST_CASE("each TP chunk of an overlapped collective is its own interval at full fidelity",
          "[engine][tp_overlap]") {
  // t = 4: a ring exchange runs t-1 = 3 steps, a pipelined reduce-scatter 4 chunks, a bulk one
  // stays whole. Per layer and micro-batch that is 2 x 2 + 2 x 3 (forward) + 2 x 2 (backward
  // all-gathers) = 14 intervals more than the 8 plain ones.
  const auto tp_intervals = [](bool overlap) {
    Scenario sc = scenario(a100_cluster(1), gpt_model(2, 1024, 16, 512, 0),
                           plan(4, 1, 1, 1, 1, ScheduleKind::k1F1B));
    sc.plan.sequence_parallel = true;
    sc.plan.tp_comm_overlap = overlap;
    return std::stol(run_isolated([&]() {
      const Workload w = build_workload(sc);
      SimOptions opt;
      opt.fidelity = Fidelity::kFull;
      const Timeline tl = simulate_step(sc, w, build_programs(sc.plan), opt);
      long n = 0;
      for (const Interval& iv : tl.actors.front().intervals) {
        n += iv.kind == IntervalKind::kTpComm ? 1 : 0;
      }
      return std::to_string(n);
    }));
  };
  CHECK(tp_intervals(true) - tp_intervals(false) == 2 * 14);
}
