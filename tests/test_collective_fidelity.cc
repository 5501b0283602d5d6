// Fast and full fidelity agree on steps whose data-parallel all-reduces run the NCCL plans of
// workload/nccl_model: pipelined hierarchical rings and trees across islands (engine/simulator,
// lowering/shortcuts). Every simulation runs in a child process.
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

}  // namespace

TEST_CASE("fast and full fidelity agree with pipelined hierarchical and tree all-reduces",
          "[engine][fidelity][nccl]") {
  for (CollectiveAlgorithm algo : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kTree}) {
    ClusterSpec cl = a100_cluster(4);
    cl.network.nodes_per_leaf = 2;
    cl.nccl.algorithm = algo;
    cl.nccl.base_latency[static_cast<int>(CollectiveProtocol::kSimple)] = 8e-6;
    cl.nccl.step_latency[static_cast<int>(CollectiveProtocol::kSimple)] = 2.8e-6;
    cl.nccl.pipeline_chunk = 2e6;
    // t = 2 in islands, d = 16: every data-parallel group has 4 members in each of 4 islands.
    Scenario sc = scenario(cl, gpt_model(8, 2048, 16, 1024, 32000),
                           plan(2, 1, 16, 1, 4, ScheduleKind::k1F1B));
    sc.plan.grad_bucket_size = 20000000;
    for (bool overlap : {false, true}) {
      sc.plan.overlap_grad_reduce = overlap;
      const Report fast = simulate(sc, Fidelity::kFast);
      const Report full = simulate(sc, Fidelity::kFull);
      INFO(algorithm_name(algo) << (overlap ? ", overlapped buckets" : ""));
      CHECK(fast.step_time_s == Approx(full.step_time_s).epsilon(0.01));
      CHECK(fast.dp_comm_exposed_s == Approx(full.dp_comm_exposed_s).epsilon(0.01));
      CHECK(fast.dp_comm_exposed_s > 0);
    }
  }
}
