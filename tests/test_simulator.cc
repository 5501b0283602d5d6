// The step simulation on SimGrid (engine/simulator): pipeline bubbles against closed forms,
// overlapped and distributed-optimizer gradient reduction, fast against full fidelity,
// determinism and TP placement. Every simulation runs in a child process.
#include <catch2/catch.hpp>
#include <sstream>

#include "core/isolated_run.h"
#include "engine/simulator.h"
#include "layout/program.h"
#include "report/metrics.h"
#include "report/writers.h"
#include "sim_report.h"
#include "test_support.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

Report simulate(const Scenario& sc, Fidelity fidelity) { return simulate_report(sc, fidelity); }

}  // namespace

TEST_CASE("with free communication the bubble is (p-1)/(m+p-1)", "[engine][bubble]") {
  for (ScheduleKind kind : {ScheduleKind::kGpipe, ScheduleKind::k1F1B}) {
    for (int p : {2, 4, 8}) {
      for (int m : {1, 4, 16, 64}) {
        // V = 0 and instant memory-bound kernels: embedding, logits and optimizer vanish.
        Scenario sc = scenario(free_comm_cluster(1), gpt_model(2 * p, 1024, 16, 256, 0),
                               plan(1, p, 1, 1, m, kind));
        const Report r = simulate(sc, Fidelity::kFast);
        INFO("schedule " << schedule_name(kind) << " p=" << p << " m=" << m);
        CHECK(r.bubble_fraction == Approx(double(p - 1) / (m + p - 1)).epsilon(1e-6));
      }
    }
  }
}

TEST_CASE("interleaved 1F1B with free communication: bubble (p-1)/(v m+p-1)", "[engine][bubble]") {
  struct Case {
    int p, v, m;
  };
  for (Case c : {Case{2, 2, 4}, Case{4, 2, 8}, Case{4, 4, 16}, Case{8, 2, 16}, Case{4, 3, 4}}) {
    Scenario sc = scenario(free_comm_cluster(1), gpt_model(c.p * c.v * 2, 1024, 16, 256, 0),
                           plan(1, c.p, 1, 1, c.m, ScheduleKind::kInterleaved1F1B));
    sc.plan.virtual_stages = c.v;
    const Report r = simulate(sc, Fidelity::kFast);
    INFO("p=" << c.p << " v=" << c.v << " m=" << c.m);
    CHECK(r.bubble_fraction == Approx(double(c.p - 1) / (c.v * c.m + c.p - 1)).epsilon(1e-6));
  }
}

TEST_CASE("overlapping the gradient reduction with backward hides DP time", "[engine][dp]") {
  // A large all-reduce (~0.9 GB of fp32 gradients per GPU over 4 nodes) next to a last
  // backward pass (micro-batch 8 x 2048 tokens) long enough to hide most of it.
  Scenario sc = scenario(a100_cluster(4), gpt_model(8, 4096, 32, 2048, 32000),
                         plan(8, 1, 4, 8, 2, ScheduleKind::k1F1B));
  sc.plan.grad_bucket_size = 20000000;
  const Report serial = simulate(sc, Fidelity::kFast);
  sc.plan.overlap_grad_reduce = true;
  const Report overlapped = simulate(sc, Fidelity::kFast);
  CHECK(overlapped.dp_comm_exposed_s < 0.6 * serial.dp_comm_exposed_s);
  CHECK(overlapped.step_time_s < serial.step_time_s);
  // The distributed optimizer moves 3/4 of the all-reduce's bytes (fp32 reduce-scatter,
  // 16-bit all-gather).
  sc.plan.overlap_grad_reduce = false;
  sc.plan.distributed_optimizer = true;
  const Report zero1 = simulate(sc, Fidelity::kFast);
  CHECK(zero1.dp_comm_exposed_s == Approx(0.75 * serial.dp_comm_exposed_s).epsilon(0.05));
}

TEST_CASE("sequence parallelism and interleaving run in full fidelity too", "[engine][fidelity]") {
  Scenario sc = scenario(a100_cluster(4), gpt_model(8, 2048, 16, 1024, 32000),
                         plan(4, 2, 4, 1, 4, ScheduleKind::kInterleaved1F1B));
  sc.plan.virtual_stages = 2;
  sc.plan.sequence_parallel = true;
  sc.plan.overlap_grad_reduce = true;
  sc.plan.distributed_optimizer = true;
  const Report fast = simulate(sc, Fidelity::kFast);
  const Report full = simulate(sc, Fidelity::kFull);
  CHECK(fast.step_time_s == Approx(full.step_time_s).epsilon(0.01));
  CHECK(fast.tp_comm_exposed_s == Approx(full.tp_comm_exposed_s).epsilon(0.01));
}

TEST_CASE("fast and full fidelity agree on 3D-parallel steps", "[engine][fidelity]") {
  struct Case {
    const char* name;
    int nodes, t, p, d, m;
    double oversubscription;
    int nics;
    ParallelDim first;
  };
  // Every case has 64 GPUs and data-parallel traffic between nodes. The tapered and
  // shared-NIC fabrics turn off the one-rank-flows shortcut; the strided placement puts TP
  // rings on the network (no closed form); the others exercise every shortcut: t = 4 puts two
  // replicas in each node (replicas 0..1 simulated), t = 16 fills two nodes (mirrored TP), and
  // pipeline neighbours in one node share NVLink with the TP rings (tensor rank 0's edges as
  // flows).
  const Case cases[] = {
      {"TP in islands, rail NICs", 8, 4, 2, 8, 4, 1, 8, ParallelDim::kTensor},
      {"tapered fat tree", 8, 8, 2, 4, 4, 4, 8, ParallelDim::kTensor},
      {"two GPUs per NIC", 8, 4, 4, 4, 8, 1, 4, ParallelDim::kTensor},
      {"TP strided across nodes", 8, 2, 2, 16, 4, 1, 8, ParallelDim::kData},
      {"one replica mirrored (TP fills nodes)", 8, 8, 2, 4, 4, 1, 8, ParallelDim::kTensor},
      {"TP fills two nodes (mirrored TP)", 8, 16, 2, 2, 4, 1, 8, ParallelDim::kTensor},
      {"pipeline neighbours in one node", 8, 4, 2, 8, 4, 1, 8, ParallelDim::kPipeline},
  };
  for (const Case& c : cases) {
    ClusterSpec cl = a100_cluster(c.nodes);
    cl.network.nodes_per_leaf = 2;
    cl.network.oversubscription = c.oversubscription;
    cl.network.nics_per_node = c.nics;
    Scenario sc = scenario(cl, gpt_model(8, 2048, 16, 1024, 32000),
                           plan(c.t, c.p, c.d, 1, c.m, ScheduleKind::k1F1B));
    if (c.first == ParallelDim::kData) {
      sc.plan.placement = {ParallelDim::kData, ParallelDim::kTensor, ParallelDim::kPipeline};
    } else if (c.first == ParallelDim::kPipeline) {
      sc.plan.placement = {ParallelDim::kTensor, ParallelDim::kPipeline, ParallelDim::kData};
    }
    for (bool zero1 : {false, true}) {
      sc.plan.distributed_optimizer = zero1;
      sc.plan.overlap_grad_reduce = zero1;
      sc.plan.grad_bucket_size = 20000000;
      const Report fast = simulate(sc, Fidelity::kFast);
      const Report full = simulate(sc, Fidelity::kFull);
      INFO(c.name << (zero1 ? ", distributed optimizer + overlapped buckets" : ""));
      CHECK(fast.step_time_s == Approx(full.step_time_s).epsilon(0.01));
      CHECK(fast.bubble_fraction == Approx(full.bubble_fraction).epsilon(0.02));
      CHECK(fast.dp_comm_exposed_s == Approx(full.dp_comm_exposed_s).epsilon(0.01));
      CHECK(fast.tp_comm_exposed_s == Approx(full.tp_comm_exposed_s).epsilon(0.01));
      // Pipeline transfers over NVLink expose tens of µs, which the two fidelities give 1 µs
      // apart (one actor per GPU against one per TP group): an absolute margin of 2 µs.
      CHECK(fast.pp_comm_exposed_s == Approx(full.pp_comm_exposed_s).epsilon(0.01).margin(2e-6));
    }
  }
}

TEST_CASE("same input, same output", "[engine][determinism]") {
  Scenario sc = scenario(a100_cluster(2), gpt_model(8, 1024, 16, 512, 32000),
                         plan(2, 2, 4, 1, 8, ScheduleKind::k1F1B));
  auto run = [&] {
    return run_isolated([&]() {
      const Workload w = build_workload(sc);
      const Timeline tl = simulate_step(sc, w, build_programs(sc.plan), SimOptions{});
      return format_json(make_report(sc, w, tl, "fast"));
    });
  };
  CHECK(run() == run());
}

TEST_CASE("inter-node tensor parallelism is slower than intra-node", "[engine][placement]") {
  // t = 8 on 8 nodes: inside one node, or one rank per node.
  Scenario sc = scenario(a100_cluster(8), gpt_model(8, 4096, 32, 2048, 32000),
                         plan(8, 1, 8, 1, 4, ScheduleKind::k1F1B));
  const Report intra = simulate(sc, Fidelity::kFast);
  sc.plan.placement = {ParallelDim::kData, ParallelDim::kTensor, ParallelDim::kPipeline};
  const Report inter = simulate(sc, Fidelity::kFast);
  CHECK(inter.step_time_s > 1.2 * intra.step_time_s);
  CHECK(inter.tp_comm_exposed_s > 2 * intra.tp_comm_exposed_s);
}
