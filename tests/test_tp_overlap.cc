// Tensor-parallel communication overlapped with GEMMs (workload/tp_overlap, plan.tp_comm_overlap):
// the closed forms of ring exchange and pipelined reduce-scatter, the SMs the communication
// kernels take, and which segments of a layer carry which method.
#include <catch2/catch.hpp>

#include "test_support.h"
#include "workload/collective_time.h"
#include "workload/stage_work.h"
#include "workload/tp_overlap.h"

using namespace trident;
using namespace trident::testing;

TEST_CASE("ring exchange: the local chunk runs at once, then t-1 steps beside t-1 chunks",
          "[tp_overlap]") {
  // t = 4, GEMM 4 ms (1 ms chunks), all-gather 6 ms (2 ms per ring step): comm-bound,
  // 1 + 3 x 2 = 7 ms; GEMM-bound (all-gather 1.5 ms): 1 + 3 x 1 = 4 ms, nothing exposed.
  const OverlapSpan slow = overlap_span(TpOverlap::kRingExchange, 4, 0, 6e-3, 0, 4e-3);
  CHECK(slow.duration == Approx(7e-3));
  CHECK(slow.comm_offset == 0);
  CHECK(slow.comm_end == Approx(6e-3));
  const OverlapSpan fast = overlap_span(TpOverlap::kRingExchange, 4, 0, 1.5e-3, 0, 4e-3);
  CHECK(fast.duration == Approx(4e-3));
}

TEST_CASE("pipelined reduce-scatter: chunk k's reduce-scatter beside chunk k+1's GEMM",
          "[tp_overlap]") {
  // 4 splits of a 4 ms GEMM, 0.5 ms per chunk's reduce-scatter: 1 + 3 x 1 + 0.5 = 4.5 ms, the
  // last chunk exposed; at 2 ms a chunk: 1 + 3 x 2 + 2 = 9 ms.
  const OverlapSpan hidden = overlap_span(TpOverlap::kPipeline, 8, 4, 2e-3, 0.5e-3, 4e-3);
  CHECK(hidden.duration == Approx(4.5e-3));
  CHECK(hidden.comm_offset == Approx(1e-3));
  const OverlapSpan bound = overlap_span(TpOverlap::kPipeline, 8, 4, 8e-3, 2e-3, 4e-3);
  CHECK(bound.duration == Approx(9e-3));
}

TEST_CASE("communication kernels on 16 SMs slow the GEMM beside them", "[tp_overlap]") {
  CHECK(userbuffers_gemm_stretch(TpOverlap::kPipeline, GpuArchitecture::kHopper) ==
        Approx(132.0 / 116));
  CHECK(userbuffers_gemm_stretch(TpOverlap::kBulk, GpuArchitecture::kAmpere) == Approx(108.0 / 92));
  CHECK(userbuffers_gemm_stretch(TpOverlap::kRingExchange, GpuArchitecture::kHopper) == 1);
  CHECK(userbuffers_gemm_stretch(TpOverlap::kNone, GpuArchitecture::kBlackwell) == 1);
}

TEST_CASE("tp_comm_overlap marks each layer's sequence-parallel collectives", "[tp_overlap]") {
  Scenario sc = scenario(a100_cluster(1), gpt_model(2, 4096, 32, 2048, 32000),
                         plan(8, 1, 1, 1, 1, ScheduleKind::k1F1B));
  sc.plan.sequence_parallel = true;
  const Workload off = build_workload(sc);
  sc.plan.tp_comm_overlap = true;
  const Workload on = build_workload(sc);
  const auto count = [](const Pass& pass, TpOverlap m) {
    int n = 0;
    for (const Segment& s : pass.segments) n += s.tp_overlap == m ? 1 : 0;
    return n;
  };
  const ChunkWork& ch = on.stages[0].chunks[0];
  // Per layer: two all-gathers (before QKV and FC1) and two reduce-scatters (after the
  // projection and FC2) forward; two all-gathers and two bulk reduce-scatters backward.
  CHECK(count(ch.forward, TpOverlap::kRingExchange) == 4);
  CHECK(count(ch.forward, TpOverlap::kPipeline) == 4);
  CHECK(count(ch.backward, TpOverlap::kRingExchange) == 4);
  CHECK(count(ch.backward, TpOverlap::kBulk) == 4);
  // The same kernels run: only where they sit changes.
  const ChunkWork& base = off.stages[0].chunks[0];
  CHECK(ch.forward.compute_s == Approx(base.forward.compute_s));
  CHECK(ch.backward.compute_s == Approx(base.backward.compute_s));
  CHECK(ch.forward.collectives == base.forward.collectives);
  // And the overlap hides part of the exposed TP time of both passes.
  const ClusterSpec& nvl = sc.cluster;
  for (bool forward : {true, false}) {
    const FusedPass a = fuse_pass(forward ? base.forward : base.backward, 8, nvl);
    const FusedPass b = fuse_pass(forward ? ch.forward : ch.backward, 8, nvl);
    INFO((forward ? "forward" : "backward"));
    CHECK(b.tp_exposed < a.tp_exposed);
    CHECK(b.duration < a.duration);
    const Pass& pass = forward ? ch.forward : ch.backward;
    CHECK(b.duration == Approx(pass.compute_s + b.tp_exposed));
  }
}

TEST_CASE("a ring-exchange segment fuses to compute + g + (t-1) max(g, step)", "[tp_overlap]") {
  ClusterSpec cluster;
  cluster.nvlink.bandwidth = 100e9;
  cluster.nvlink.latency = 0;
  Segment seg;
  seg.compute_s = 1e-3;
  seg.tp_bytes = 800e6;  // all-gather over 8: 7 steps of 100 MB / 100 GB/s = 1 ms each
  seg.tp_op = CollectiveOp::kAllGather;
  seg.overlap_s = 4e-3;  // 0.5 ms chunks
  seg.tp_overlap = TpOverlap::kRingExchange;
  double exposed = 0;
  CHECK(fuse_segment(seg, 8, cluster, &exposed) == Approx(1e-3 + 0.5e-3 + 7 * 1e-3));
  CHECK(exposed == Approx(0.5e-3 + 7e-3 - 4e-3));
}
