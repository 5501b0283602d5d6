// Closed-form times of collectives with no competing traffic, and of passes whose
// tensor-parallel collectives are timed that way and fused with the surrounding compute. Pure:
// the engine runs these times, and anything that explains a run reads them from what it
// recorded (no SimGrid here).
#ifndef TRIDENT_WORKLOAD_COLLECTIVE_TIME_H_
#define TRIDENT_WORKLOAD_COLLECTIVE_TIME_H_

#include <vector>

#include "config/cluster.h"
#include "core/collective_op.h"
#include "workload/stage_work.h"

namespace trident {

// Returns the closed-form time of a ring all-reduce of `bytes` over `n` GPUs whose every
// transfer crosses one route of `latency` and `bandwidth` at protocol `efficiency`:
// 2(n-1) * (latency + bytes / (n * bandwidth * efficiency)). It equals the lowered, simulated
// all-reduce when nothing else shares the links.
double ring_all_reduce_time(int n, double bytes, double latency, double bandwidth,
                            double efficiency);

// Returns the closed-form ring time of `op` on a buffer of `bytes`: the all-reduce above, or
// (n-1) * (latency + bytes / (n * bandwidth * efficiency)) for reduce-scatter and all-gather.
double ring_collective_time(CollectiveOp op, int n, double bytes, double latency, double bandwidth,
                            double efficiency);

// Returns the closed-form time of `op` on `bytes` over `n` GPUs of one island of `cluster`:
// the plan NCCL's tuning picks there (workload/nccl_model.h: ring, or NVLS for an all-reduce
// with in-switch reduction), as the engine runs it.
double island_collective_time(CollectiveOp op, int n, double bytes, const ClusterSpec& cluster);

// One TP collective of a fused pass, where the closed form puts it.
struct FusedCollective {
  int segment = 0;      // index into Pass::segments
  double offset = 0;    // seconds from the pass start (after the segment's compute)
  double duration = 0;  // island_collective_time of the segment's collective (chunked
                        // under tp_comm_overlap: from its first flow to its last)
};

// A pass with its TP collectives in closed form: what the engine executes for a pass when TP
// groups sit alone on their NVLink links.
struct FusedPass {
  double duration = 0;    // compute plus the exposed part of every collective
  double tp_exposed = 0;  // exposed collective time (beyond the compute overlapping it)
  std::vector<FusedCollective> collectives;  // in pass order
};

// Returns the closed-form time of `pass` on a TP group of `t` GPUs in one island, with where
// each collective sits in it.
FusedPass fuse_pass(const Pass& pass, int t, const ClusterSpec& cluster);
// Returns the closed-form time of one segment, adding its exposed collective time to *exposed
// (with tp_comm_overlap: the chunked overlap of workload/tp_overlap.h, whose lost SMs count as
// exposed).
double fuse_segment(const Segment& seg, int t, const ClusterSpec& cluster, double* exposed);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_COLLECTIVE_TIME_H_
