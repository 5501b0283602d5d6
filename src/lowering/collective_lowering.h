// Lowering of collectives onto point-to-point flows between GPUs (pure, no SimGrid).
//
// A collective runs the plan NCCL's tuning picks (workload/nccl_model.h): ring, tree, NVLS or
// NVLS-tree, with a protocol. Each stage of the plan is a set of rings (the whole group, the
// members of each island, or the members with one local index across islands); in a stage
// every member sends to its ring successor. Stages run one after another, or, split into
// chunks, side by side (fill, body, drain: intra- and inter-island phases overlap).
//
// Phases run one after another unless one is marked `with_next`; the flows of a phase run
// concurrently. A phase may stand for `steps` identical consecutive ring steps collapsed into
// one flow per edge carrying their bytes: with no competing traffic that is exact; under
// contention it spreads one step's bytes over the whole phase. The first phase carries the
// collective's latency, of which the executor waits what the routes' latencies do not cover.
#ifndef TRIDENT_LOWERING_COLLECTIVE_LOWERING_H_
#define TRIDENT_LOWERING_COLLECTIVE_LOWERING_H_

#include <functional>
#include <vector>

#include "config/cluster.h"
#include "core/collective_op.h"
#include "workload/collective_time.h"  // closed forms, used beside the lowering
#include "workload/nccl_model.h"
#include "workload/stage_work.h"

namespace trident {

struct Flow {
  int src = 0;
  int dst = 0;
  double bytes = 0;
  double efficiency = 0;  // achieved fraction of the route's bandwidth; 0: the route's own
};

struct Phase {
  std::vector<Flow> flows;
  int steps = 1;           // ring steps this phase stands for
  bool with_next = false;  // runs side by side with the next phase
  double latency = 0;      // first phase of a collective: the collective's latency (s)
  // Rings timed in closed form instead of flows (LoweringOptions::closed_form_intra): the
  // phase, with those beside it, lasts at least floor_s, of which floor_latency is route
  // latency.
  double floor_s = 0;
  double floor_latency = 0;
};

struct LoweringOptions {
  // false: one phase per ring step (validation mode), unless the plan is pipelined
  bool collapse_steps = true;
  // The cluster whose NCCL model, NVLink and network efficiencies the lowering uses. Required
  // by lower_collective and lower_plan.
  const ClusterSpec* cluster = nullptr;
  // Lowering for the GPUs a fast-fidelity actor simulates, when set: a ring inside an island
  // with no accepted member is dropped; its edges from or to an accepted GPU run as flows and
  // the others, which meet no simulated traffic, in closed form (route latency + bytes /
  // (NVLink bandwidth x efficiency), Phase::floor_s).
  std::function<bool(int)> simulated;
  // With `simulated`: each accepted member of a ring between islands sends its edge's bytes
  // out through its own NIC and back (the platform's loopback route) instead of the ring's
  // flows. With every island alike that puts on the NIC exactly the load of the member's real
  // edges out and in.
  bool mirror_inter = false;
  // With `simulated`: every edge of a ring inside an island in closed form. Exact when no
  // other traffic uses those NVLink links.
  bool closed_form_intra = false;
};

// Returns the phases of `op` over every group in `groups` at once (the groups run side by side,
// e.g. the t data-parallel rings of one pipeline stage). `bytes` is the payload per GPU (the full
// buffer for all-reduce; the full, unscattered buffer for reduce-scatter and all-gather).
// `island_of` maps a GPU to its NVLink island. The plan is choose_collective_plan's for the
// first group's shape. Requires all groups the same size, >= 1, and options.cluster.
std::vector<Phase> lower_collective(CollectiveOp op, const std::vector<std::vector<int>>& groups,
                                    double bytes, const std::function<int(int)>& island_of,
                                    const LoweringOptions& options);

// Returns the phases of a data-parallel `op` (reduce-scatter of gradients, all-gather of
// weights) over `groups` with the distributed optimizer in `instances` copies (Megatron-Core's
// num_distributed_optimizer_instances, param_and_grad_buffer.py start_grad_sync): each group
// splits into `instances` consecutive slices; a reduce-scatter runs inside each slice, then an
// all-reduce of its 1 / slice shard across the slices (the members at one position in each),
// an all-gather inside each slice only. The first phase carries both collectives' latencies.
// Requires instances to divide every group's size.
std::vector<Phase> lower_partial_data_parallel(CollectiveOp op,
                                               const std::vector<std::vector<int>>& groups,
                                               double bytes, int instances,
                                               const std::function<int(int)>& island_of,
                                               const LoweringOptions& options);

// Returns the phases of `plan` over every group in `groups` (as lower_collective).
std::vector<Phase> lower_plan(const CollectivePlan& plan,
                              const std::vector<std::vector<int>>& groups,
                              const std::function<int(int)>& island_of,
                              const LoweringOptions& options);

// Returns one collapsed edge of `plan` (a flat plan over n members, one per island), from `gpu`
// out through its own NIC and back (the platform's loopback route): when every edge of a
// network ring carries the same load, as for symmetric data-parallel replicas, this one flow
// times the whole ring. Requires plan.stages to hold one stage.
std::vector<Phase> lower_mirrored(const CollectivePlan& plan, int gpu, const ClusterSpec& cluster);

// Returns one phase in which every member of each ring in `rings` sends `bytes` to its
// successor (the last to the first): one step of context-parallel attention, each rank passing
// its K/V (and dK/dV) block on (Transformer Engine's send/recv pair per step). Requires rings of
// at least two members.
std::vector<Phase> lower_ring_exchange(const std::vector<std::vector<int>>& rings, double bytes);

}  // namespace trident

#endif  // TRIDENT_LOWERING_COLLECTIVE_LOWERING_H_
