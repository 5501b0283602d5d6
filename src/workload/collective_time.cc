#include "workload/collective_time.h"

#include <algorithm>

#include "workload/nccl_model.h"
#include "workload/tp_overlap.h"

namespace trident {

double ring_all_reduce_time(int n, double bytes, double latency, double bandwidth,
                            double efficiency) {
  if (n < 2) return 0;
  return 2.0 * (n - 1) * (latency + bytes / (n * bandwidth * efficiency));
}

double ring_collective_time(CollectiveOp op, int n, double bytes, double latency, double bandwidth,
                            double efficiency) {
  const double all_reduce = ring_all_reduce_time(n, bytes, latency, bandwidth, efficiency);
  return op == CollectiveOp::kAllReduce ? all_reduce : all_reduce / 2;
}

double island_collective_time(CollectiveOp op, int n, double bytes, const ClusterSpec& c) {
  if (n < 2 || bytes <= 0) return 0;
  const CollectiveShape shape{n, 1, n};
  return collective_plan_time(choose_collective_plan(op, shape, bytes, c), c);
}

OverlapSpan segment_overlap(const Segment& seg, int t, const ClusterSpec& nvl) {
  const double comm = island_collective_time(seg.tp_op, t, seg.tp_bytes, nvl);
  const double chunk = seg.tp_overlap == TpOverlap::kPipeline
                           ? island_collective_time(seg.tp_op, t, seg.tp_bytes / seg.tp_splits, nvl)
                           : 0;
  return overlap_span(seg.tp_overlap, t, seg.tp_splits, comm, chunk,
                      seg.overlap_s * seg.overlap_stretch);
}

double fuse_segment(const Segment& seg, int t, const ClusterSpec& nvl, double* exposed) {
  if (seg.tp_bytes <= 0 || t < 2) return seg.compute_s + seg.overlap_s;
  const OverlapSpan span = segment_overlap(seg, t, nvl);
  // Exposed: what the compute waits beyond its own time, SMs lost to the kernels included.
  *exposed += std::max(0.0, span.duration - seg.overlap_s);
  return seg.compute_s + std::max(span.duration, seg.overlap_s);
}

FusedPass fuse_pass(const Pass& pass, int t, const ClusterSpec& nvl) {
  FusedPass f;
  for (size_t i = 0; i < pass.segments.size(); ++i) {
    const Segment& seg = pass.segments[i];
    if (seg.tp_bytes > 0 && t > 1) {
      const OverlapSpan span = segment_overlap(seg, t, nvl);
      f.collectives.push_back({static_cast<int>(i), f.duration + seg.compute_s + span.comm_offset,
                               span.comm_end - span.comm_offset});
    }
    f.duration += fuse_segment(seg, t, nvl, &f.tp_exposed);
  }
  return f;
}

}  // namespace trident
