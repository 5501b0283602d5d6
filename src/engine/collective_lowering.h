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
#include "workload/collective_time.h"  // closed forms, used beside the lowering
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

// Returns one collapsed edge of a ring `op` over `n` members, from `gpu` out through its own
// NIC and back (the platform's loopback route): when every edge of a network ring carries the
// same load, as for symmetric data-parallel replicas, this one flow times the whole ring.
std::vector<Phase> lower_mirrored_ring(CollectiveOp op, int gpu, int n, double bytes);

// Returns one phase in which every member of each ring in `rings` sends `bytes` to its
// successor (the last to the first): one step of context-parallel attention, each rank passing
// its K/V (and dK/dV) block on (Transformer Engine's send/recv pair per step). Requires rings of
// at least two members.
std::vector<Phase> lower_ring_exchange(const std::vector<std::vector<int>>& rings, double bytes);

}  // namespace trident

#endif  // TRIDENT_ENGINE_COLLECTIVE_LOWERING_H_
