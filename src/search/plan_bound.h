// What `trident plan` knows of a candidate before simulating it: its exact memory per GPU
// (the report's fits verdict) and a lower bound on its step time from the pure cost model.
// Pure (no SimGrid).
#ifndef TRIDENT_SEARCH_PLAN_BOUND_H_
#define TRIDENT_SEARCH_PLAN_BOUND_H_

#include <map>
#include <tuple>
#include <vector>

#include "config/scenario.h"
#include "layout/program.h"
#include "workload/stage_work.h"

namespace trident {

// The parts of a step lower bound, each a duration no simulation can beat (seconds).
struct StepBound {
  double total_s = 0;
  double compute_s = 0;   // the busiest stage's passes (TP collectives in closed form, CP ring
                          // steps) and the pipeline transfers it receives, + optimizer
  double pipeline_s = 0;  // fill and drain: the passes other stages must run before and after
  double dp_s = 0;        // data-parallel communication no schedule can hide
};

// Returns a lower bound on the step time `simulate_step` gives for `scenario` with
// `workload` and `programs` (= build_programs(scenario.plan)), at either fidelity.
//
// Why it is a bound: every pass of stage s runs on one actor, one after the other, and takes
// at least its compute plus its TP collectives' closed form (the engine runs exactly that
// when the group's links are its own, and shares links, so is slower, otherwise). Stage s
// cannot start before the first micro-batch's forward has crossed stages 0..s-1, and when its
// last pass is a backward of its first chunk, stage 0 finishes only after that backward has
// crossed stages s-1..0 back; then come stage 0's gradient reduction (when not overlapped,
// the closed-form ring when every DP edge is a NIC-to-NIC flow of its own NIC's bandwidth,
// else, for a group spanning islands, what each island must send through its NICs; only the
// last bucket under overlap_grad_reduce or sharded gradients), optimizer and parameter
// all-gather (none under overlap_param_gather, whose gathers hide behind the next forward, and
// with sharded weights, whose per-layer gathers count 0). With tp_comm_overlap the passes'
// closed form is the overlapped one (workload/tp_overlap.h), as the engine runs it. A
// context-parallel ring step lasts at least its attention block and its K/V shift over the
// slowest link of the ring (a NIC when the ring spans islands). Every pipeline transfer a
// stage receives holds that stage for at least its bytes over its route's slowest link (the
// engine runs it between the receive and the pass), and the first micro-batch's transfers
// lengthen the fill and the drain chains likewise. Every wait counts 0. A MoE dispatch or combine
// (alltoall dispatcher) takes at least what the busiest member of local rank 0's expert-parallel
// group sends or receives across islands, over its NIC at the network's protocol efficiency
// (imbalanced_all_to_all_bytes puts the hot experts on EP rank 0, as the engine does); the
// allgather dispatcher's all-gather and reduce-scatter over an EP group spanning islands take the
// spanning floor above.
//
// `memo`, when given, keeps what the bounds of one search compute again and again (the
// in-island closed forms of TP collectives, the groups' layouts over islands); it changes
// no result. Requires: every call with the same memo has the same cluster.
class BoundMemo;
StepBound step_lower_bound(const Scenario& scenario, const Workload& workload,
                           const std::vector<StageProgram>& programs, BoundMemo* memo = nullptr);

// How a TP or DP group lies over NVLink islands: `islands` it spans, `per_island` members in
// each and `nics` distinct NICs those members use (GPU i of a node uses NIC i mod
// nics_per_node), the fewest over its islands.
struct GroupLayout {
  int islands = 1;
  int per_island = 1;
  int nics = 1;
};

// The layouts step_lower_bound reads from a plan's rank map: its first TP group's, each
// stage's first DP group's, and whether every DP ring edge is a NIC-to-NIC flow.
struct PlanLayouts {
  GroupLayout tensor;
  std::vector<GroupLayout> data;  // per pipeline stage
  // Per pipeline stage: the expert-data-parallel group of local rank 0 (schedule/
  // expert_ranks.h); empty when EP x ETP does not divide the stage's GPUs.
  std::vector<GroupLayout> expert_data;
  // Per pipeline stage: the NVLink island of each member of local rank 0's expert-parallel
  // group, in EP rank order; empty without expert parallelism (or as expert_data).
  std::vector<std::vector<int>> expert_islands;
  std::vector<GroupLayout> expert;  // per stage: that expert-parallel group's layout
  // Per pipeline stage: the context-parallel ring of TP rank 0 in DP replica 0 (islands 1
  // without context parallelism).
  std::vector<GroupLayout> context;
  // Per pipeline stage: the NVLink island of its GPU (TP, CP and DP rank 0), which tells
  // whether a pipeline transfer crosses a NIC.
  std::vector<int> stage_island;
  bool data_one_per_island = false;
};

class BoundMemo {
 public:
  // Returns island_collective_time(op, t, bytes, cluster), computed once per key.
  double island_time(CollectiveOp op, int t, double bytes, const ClusterSpec& cluster);
  // Returns the layouts of `plan` on `cluster`, computed once per plan shape (sizes,
  // placement, islands used).
  const PlanLayouts& layouts(const PlanSpec& plan, const ClusterSpec& cluster);

 private:
  std::map<std::tuple<int, int, double>, double> island_;
  std::map<std::vector<int>, PlanLayouts> layouts_;
};

}  // namespace trident

#endif  // TRIDENT_SEARCH_PLAN_BOUND_H_
