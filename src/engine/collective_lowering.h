// Lowering of collectives onto point-to-point flows between GPUs (pure, no SimGrid).
//
// A ring all-reduce of S bytes over n GPUs is 2(n-1) steps; in each step every GPU sends S/n
// bytes to its ring successor. When a group spans NVLink islands with several members in each,
// the all-reduce is hierarchical: reduce-scatter inside each island, one ring all-reduce per
// local index across islands (on S/c bytes, c members per island), all-gather inside each island.
//
// Phases run one after another; the flows of a phase run concurrently. A phase may stand for
// `steps` identical consecutive ring steps collapsed into one flow per edge carrying `steps`
// times the bytes (then the executor adds (steps-1) route latencies): with no competing traffic
// that is exact; under contention it spreads one step's bytes over the whole phase.
#ifndef TRIDENT_ENGINE_COLLECTIVE_LOWERING_H_
#define TRIDENT_ENGINE_COLLECTIVE_LOWERING_H_

#include <functional>
#include <vector>

#include "config/cluster.h"
#include "core/collective_op.h"
#include "workload/stage_work.h"

namespace trident {

struct Flow {
  int src = 0;
  int dst = 0;
  double bytes = 0;
  double efficiency = 0;  // protocol efficiency; 0: the route's (NVLink or network)
};

struct Phase {
  std::vector<Flow> flows;
  int steps = 1;
};

struct LoweringOptions {
  bool collapse_steps = true;  // false: one phase per ring step (validation mode)
  // > 0: all-reduces confined to one island use in-switch reduction (NVLS) at this efficiency:
  // every GPU sends its buffer to the switch and receives the sum, one flow each way.
  double in_switch_efficiency = 0;
};

// Returns the phases of `op` over every group in `groups` at once (the groups run side by side,
// e.g. the t data-parallel rings of one pipeline stage). `bytes` is the payload per GPU (the full
// buffer for all-reduce; the full, unscattered buffer for reduce-scatter and all-gather).
// `island_of` maps a GPU to its NVLink island. Requires all groups the same size, >= 1.
std::vector<Phase> lower_collective(CollectiveOp op, const std::vector<std::vector<int>>& groups,
                                    double bytes, const std::function<int(int)>& island_of,
                                    const LoweringOptions& options);

// Returns the closed-form time of a ring all-reduce of `bytes` over `n` GPUs whose every
// transfer crosses one route of `latency` and `bandwidth` at protocol `efficiency`:
// 2(n-1) * (latency + bytes / (n * bandwidth * efficiency)). It equals the lowered, simulated
// all-reduce when nothing else shares the links.
double ring_all_reduce_time(int n, double bytes, double latency, double bandwidth,
                            double efficiency);

// Returns one collapsed edge of a ring `op` over `n` members, from `gpu` out through its own
// NIC and back (the platform's loopback route): when every edge of a network ring carries the
// same load, as for symmetric data-parallel replicas, this one flow times the whole ring.
std::vector<Phase> lower_mirrored_ring(CollectiveOp op, int gpu, int n, double bytes);

// Returns the closed-form ring time of `op` on a buffer of `bytes`: the all-reduce above, or
// (n-1) * (latency + bytes / (n * bandwidth * efficiency)) for reduce-scatter and all-gather.
double ring_collective_time(CollectiveOp op, int n, double bytes, double latency, double bandwidth,
                            double efficiency);

// A pass with its TP all-reduces in closed form: what the engine executes for a pass when TP
// groups sit alone on their NVLink links.
struct FusedPass {
  double duration = 0;    // compute plus the exposed part of every all-reduce
  double tp_exposed = 0;  // exposed all-reduce time (beyond the compute overlapping it)
};

// Returns the closed-form time of `op` on `bytes` over `n` GPUs of one island: a ring, or for
// an all-reduce with in-switch reduction, latency + bytes / (bandwidth * its efficiency).
double island_collective_time(CollectiveOp op, int n, double bytes, const NvlinkSpec& nvlink);

// Returns the closed-form time of `pass` on a TP group of `t` GPUs in one island.
FusedPass fuse_pass(const Pass& pass, int t, const NvlinkSpec& nvlink);
// Returns the closed-form time of one segment, adding its exposed collective time to *exposed.
double fuse_segment(const Segment& seg, int t, const NvlinkSpec& nvlink, double* exposed);

}  // namespace trident

#endif  // TRIDENT_ENGINE_COLLECTIVE_LOWERING_H_
