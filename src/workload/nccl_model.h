// NCCL's choice of algorithm and protocol for a collective, and the plan it runs (pure, no
// SimGrid): the stages of ring, tree, NVLS and NVLS-tree all-reduces and of ring reduce-scatter
// and all-gather, their bytes and bandwidth fractions, and the latency of the collective as
// NCCL's tuning models it (NVIDIA/nccl src/graph/tuning.cc, ncclTopoTuneModel: a base latency
// per algorithm and protocol plus a latency per ring step or tree level, intra- and
// inter-node). docs/collectives.md states the model and where each term comes from.
//
// A plan's stages run on rings of the group's members: a flat stage on the whole group, an
// intra stage on the members of each island, an inter stage on the members with the same local
// index across islands. With several stages and more than one chunk the stages overlap chunk by
// chunk (fill, body, drain: see plan_phases_time). collective_plan_time is the closed form the
// engine's lowering (lowering/collective_lowering.h) reproduces exactly on links nothing else
// uses.
#ifndef TRIDENT_WORKLOAD_NCCL_MODEL_H_
#define TRIDENT_WORKLOAD_NCCL_MODEL_H_

#include <map>
#include <vector>

#include "config/cluster.h"
#include "core/collective_op.h"

namespace trident {

// How a group lies on the islands: n members over k islands, c per island when every island
// holds the same count (0 when not), over `sites` datacenters (cluster.sites).
struct CollectiveShape {
  int ranks = 1;
  int islands = 1;
  int per_island = 1;
  int sites = 1;
};

enum class StageRings { kFlat, kIntra, kInter };

struct CollectiveStage {
  StageRings rings = StageRings::kFlat;
  int steps = 1;                 // ring steps or tree levels (one flow each when not collapsed)
  double bytes = 0;              // per member, over the whole stage, to its ring successor
  double fraction = 1;           // of the route's protocol efficiency (protocol, algorithm)
  double switch_efficiency = 0;  // > 0: NVLS, this fraction of NVLink bandwidth instead
};

struct CollectivePlan {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  CollectiveProtocol protocol = CollectiveProtocol::kSimple;
  double latency = 0;    // s: NCCL's latency of the collective (covers the routes' latencies)
  int chunks = 1;        // pipeline chunks when there are several stages
  bool crosses = false;  // the group spans islands (a flat stage then runs over the network)
  int sites = 1;         // datacenters the group spans: its network rings cross the WAN
  std::vector<CollectiveStage> stages;
};

// Returns the datacenters (cluster.sites) that the GPUs of `group` lie in.
int group_sites(const std::vector<int>& group, const ClusterSpec& cluster);

// Returns the shape of `group` given `island_of`.
template <class IslandOf>
CollectiveShape collective_shape(const std::vector<int>& group, const IslandOf& island_of);

// Returns the plan of `op` on `bytes` (per GPU, the full buffer) over `shape` with the
// algorithm and protocol given (neither kAuto). Requires the algorithm to apply
// (algorithm_applies).
CollectivePlan make_collective_plan(CollectiveOp op, const CollectiveShape& shape, double bytes,
                                    const ClusterSpec& cluster, CollectiveAlgorithm algorithm,
                                    CollectiveProtocol protocol);

// True when `algorithm` can run `op` over `shape` on `cluster`: ring always; tree across
// islands (all-reduce); NVLS in one island, NVLS-tree across islands with two or more members
// in each (all-reduce, in-switch reduction present).
bool algorithm_applies(CollectiveAlgorithm algorithm, CollectiveOp op, const CollectiveShape& shape,
                       const ClusterSpec& cluster);

// Returns the plan NCCL's tuning picks: cluster.nccl's forced algorithm and protocol where they
// apply (else ring, or every protocol), then the candidate of least collective_plan_time (ties:
// ring before tree before NVLS before NVLS-tree, Simple before LL128 before LL). Across sites
// the candidates are timed with the WAN's latency (NCCL's cross-datacenter rings and trees,
// docs/fabrics.md).
CollectivePlan choose_collective_plan(CollectiveOp op, const CollectiveShape& shape, double bytes,
                                      const ClusterSpec& cluster);

// Returns the seconds `plan` takes on links nothing else uses: max(latency, L_routes) plus, per
// phase, max over its concurrent stages of (route latency + bytes / (bandwidth * efficiency))
// minus the largest of those route latencies, where L_routes sums those largest latencies.
// `collapse_steps` false counts a stage's route latency once per step when the stages run one
// after another (validation mode runs them step by step; pipelined stages stay collapsed).
double collective_plan_time(const CollectivePlan& plan, const ClusterSpec& cluster,
                            bool collapse_steps = true);

// One phase of a plan: the stages (indices into plan.stages) that run in it side by side, each
// with the share of its bytes it moves there.
struct PlanPhase {
  std::vector<int> stages;
  std::vector<double> shares;
};

// Returns the phases of `plan`: one per stage in order when it has one stage or one chunk;
// else fill (first stage, 1/m), body (first and last stages (m-1)/m, the middle ones whole),
// drain (last stage, 1/m), m = plan.chunks.
std::vector<PlanPhase> plan_phases(const CollectivePlan& plan);

// nccl-tests' bus bandwidth factor of `op` over n ranks (doc/PERFORMANCE.md): all-reduce
// 2(n-1)/n, reduce-scatter, all-gather and all-to-all (n-1)/n.
double bus_bandwidth_factor(CollectiveOp op, int n);

template <class IslandOf>
CollectiveShape collective_shape(const std::vector<int>& group, const IslandOf& island_of) {
  CollectiveShape s;
  s.ranks = static_cast<int>(group.size());
  std::map<int, int> counts;  // island -> members
  for (int gpu : group) ++counts[island_of(gpu)];
  s.islands = static_cast<int>(counts.size());
  s.per_island = counts.begin()->second;
  for (const auto& [isl, n] : counts) {
    if (n != s.per_island) s.per_island = 0;
  }
  return s;
}

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_NCCL_MODEL_H_
