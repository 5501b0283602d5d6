// Context parallelism in the engine (engine/simulator): the p2p ring's exposed time against
// its closed form, free communication, and fast against full fidelity on CP layouts (CP
// inside a node beside TP, across nodes, with pipeline stages and overlapped buckets). Every
// simulation runs in a child process.
#include <catch2/catch.hpp>
#include <sstream>

#include "core/isolated_run.h"
#include "engine/simulator.h"
#include "layout/program.h"
#include "report/metrics.h"
#include "sim_report.h"
#include "test_support.h"
#include "workload/collective_time.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

struct Result {
  double step = 0, bubble = 0, tp = 0, pp = 0, dp = 0, cp = 0, compute = 0;
};

Result simulate(const Scenario& sc, Fidelity fidelity) {
  const Report r = simulate_report(sc, fidelity);
  return {r.step_time_s,
          r.bubble_fraction,
          r.tp_comm_exposed_s,
          r.pp_comm_exposed_s,
          r.dp_comm_exposed_s,
          r.cp_comm_exposed_s,
          r.compute_utilization * r.step_time_s};
}

ClusterSpec hopper_cluster(int nodes) {
  ClusterSpec c = a100_cluster(nodes);
  c.gpu.architecture = GpuArchitecture::kHopper;  // fused attention, as CP requires
  return c;
}

ModelSpec gqa_model(int layers, int seq, long vocab = 32000) {
  ModelSpec m = gpt_model(layers, 2048, 16, seq, vocab);
  m.num_query_groups = 4;
  return m;
}

}  // namespace

TEST_CASE("each ring step exposes what its attention block does not hide", "[engine][context]") {
  // One node, t = 2, cp = 4, one stage, one replica: the CP ring runs on NVLink with nothing
  // else on its links, so every transfer takes the point-to-point closed form (a two-member
  // all-gather of twice the bytes) and starts with its block. NVLink slowed so that some
  // steps are exposed.
  ClusterSpec c = hopper_cluster(1);
  c.nvlink.bandwidth = 2e9;
  Scenario sc = scenario(c, gqa_model(2, 8192), plan(2, 1, 1, 1, 3, ScheduleKind::k1F1B));
  sc.plan.context = 4;
  const Workload w = build_workload(sc);
  double expected = 0;
  for (const Pass* pass : {&w.stages[0].chunks[0].forward, &w.stages[0].chunks[0].backward}) {
    for (const Segment& seg : pass->segments) {
      for (const RingStep& step : seg.ring) {
        if (step.bytes <= 0) continue;
        const double transfer =
            ring_collective_time(CollectiveOp::kAllGather, 2, 2 * step.bytes, c.nvlink.latency,
                                 c.nvlink.bandwidth, c.nvlink.protocol_efficiency);
        expected += std::max(0.0, transfer - step.compute_s);
      }
    }
  }
  expected *= sc.plan.num_microbatches;
  REQUIRE(expected > 0);
  const Result r = simulate(sc, Fidelity::kFast);
  CHECK(r.cp == Approx(expected).epsilon(1e-6));
  // Nothing else waits: the step is compute and the TP, CP and dp-cp gradient reduction
  // (d = 1, yet cp = 4 ranks reduce their gradients) exposed times.
  CHECK(r.dp > 0);
  CHECK(r.step == Approx(r.compute + r.tp + r.cp + r.dp).epsilon(1e-6));
}

TEST_CASE("with free communication context parallelism exposes nothing", "[engine][context]") {
  ClusterSpec c = free_comm_cluster(2);
  c.gpu.architecture = GpuArchitecture::kHopper;
  // V = 0: the first and last stages do the same work, as the closed form assumes.
  Scenario sc = scenario(c, gqa_model(4, 8192, 0), plan(2, 2, 1, 1, 4, ScheduleKind::k1F1B));
  sc.plan.context = 4;
  const Result r = simulate(sc, Fidelity::kFast);
  CHECK(r.cp == Approx(0).margin(1e-12));
  CHECK(r.bubble == Approx(1.0 / (4 + 1)).epsilon(1e-6));  // (p-1)/(m+p-1)
}

TEST_CASE("fast and full fidelity agree on context-parallel steps", "[engine][fidelity][context]") {
  struct Case {
    const char* name;
    int nodes, t, cp, p, d, m;
    std::vector<ParallelDim> placement;
  };
  using D = ParallelDim;
  const Case cases[] = {
      {"CP beside TP in a node",
       2,
       4,
       2,
       2,
       1,
       4,
       {D::kTensor, D::kContext, D::kData, D::kPipeline}},
      {"CP across nodes, one replica mirrored",
       4,
       8,
       2,
       1,
       2,
       2,
       {D::kTensor, D::kContext, D::kData, D::kPipeline}},
      {"CP across nodes with stages",
       4,
       4,
       2,
       2,
       2,
       4,
       {D::kTensor, D::kData, D::kContext, D::kPipeline}},
      {"TP spans nodes, CP inside",
       2,
       4,
       4,
       1,
       1,
       2,
       {D::kContext, D::kTensor, D::kData, D::kPipeline}},
  };
  for (const Case& c : cases) {
    Scenario sc = scenario(hopper_cluster(c.nodes), gqa_model(4, 8192),
                           plan(c.t, c.p, c.d, 1, c.m, ScheduleKind::k1F1B));
    sc.plan.context = c.cp;
    sc.plan.placement = c.placement;
    sc.plan.sequence_parallel = true;
    for (bool zero1 : {false, true}) {
      sc.plan.distributed_optimizer = zero1;
      sc.plan.overlap_grad_reduce = zero1;
      sc.plan.grad_bucket_size = 20000000;
      const Result fast = simulate(sc, Fidelity::kFast);
      const Result full = simulate(sc, Fidelity::kFull);
      INFO(c.name << (zero1 ? ", distributed optimizer + overlapped buckets" : ""));
      CHECK(fast.cp > 0);
      CHECK(fast.step == Approx(full.step).epsilon(0.01));
      CHECK(fast.cp == Approx(full.cp).epsilon(0.01));
      CHECK(fast.tp == Approx(full.tp).epsilon(0.01));
      CHECK(fast.dp == Approx(full.dp).epsilon(0.01));
      CHECK(fast.pp == Approx(full.pp).epsilon(0.01));
    }
  }
}

TEST_CASE("the timeline records every ring transfer with its bytes and layer",
          "[engine][trace][context]") {
  Scenario sc =
      scenario(hopper_cluster(1), gqa_model(2, 8192), plan(2, 1, 1, 1, 2, ScheduleKind::k1F1B));
  sc.plan.context = 4;
  const std::string text = run_isolated([&]() {
    const Workload w = build_workload(sc);
    const Timeline tl = simulate_step(sc, w, build_programs(sc.plan), SimOptions{});
    const ChunkWork& ch = w.stages[0].chunks[0];
    const int expected = (ch.forward.ring_steps + ch.backward.ring_steps) * 2;  // 2 micro-batches
    double bytes = 0;
    int count = 0, with_layer = 0;
    for (const Interval& iv : tl.actors.front().intervals) {
      if (iv.kind != IntervalKind::kCpComm) continue;
      ++count;
      bytes += iv.bytes;
      with_layer += iv.layer >= 0 && iv.end > iv.start;
    }
    std::ostringstream out;
    out.precision(17);
    out << tl.actors.size() << " " << expected << " " << count << " " << with_layer << " " << bytes
        << " " << 2 * (ch.forward.cp_bytes + ch.backward.cp_bytes);
    return out.str();
  });
  std::istringstream in(text);
  int actors = 0, expected = 0, count = 0, with_layer = 0;
  double bytes = 0, expected_bytes = 0;
  in >> actors >> expected >> count >> with_layer >> bytes >> expected_bytes;
  CHECK(actors == 4);  // one per context rank
  CHECK(count == expected);
  CHECK(with_layer == count);
  CHECK(bytes == Approx(expected_bytes).epsilon(1e-12));
}
