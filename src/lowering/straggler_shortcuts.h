// Where the engine's shortcuts stay exact with stragglers (cluster.stragglers,
// docs/stragglers.md), and which simulated actor each slow GPU and degraded NVLink falls on.
// Pure; no SimGrid.
#ifndef TRIDENT_LOWERING_STRAGGLER_SHORTCUTS_H_
#define TRIDENT_LOWERING_STRAGGLER_SHORTCUTS_H_

#include <vector>

#include "layout/rank_map.h"
#include "lowering/shortcuts.h"

namespace trident {

// Revises the shortcuts decide_shortcuts took for a healthy cluster (fast fidelity) to stay
// exact with `sc`'s stragglers, and says so in their reasons: a degraded NVLink or NIC breaks
// the symmetry one_rank_flows, mirrored_tp, one_replica, nic_all_to_all and collapsed_flex
// rest on (they go off); slow GPUs keep one_replica only when they all sit in one block of the
// replicas it simulates (then that block is the one simulated, StragglerActors maps them
// there); fused_tp stays, timed with the degraded NVLink for the group that holds it.
// Background traffic, on every fabric link alike, keeps every shortcut. A no-op without
// stragglers. Requires s from decide_shortcuts.
void decide_straggler_shortcuts(const Scenario& sc, const RankMap& ranks, Shortcuts* s);

// What each simulated actor of a step runs slow: the clock fraction of the slowest GPU it stands
// for (its own at full fidelity; its TP group's under group_actor; with one_replica, those of
// every replica it stands for) and whether its TP group holds the degraded NVLink.
class StragglerActors {
 public:
  // Requires `shortcuts` = decide_shortcuts(sc, ...) and `ranks` of sc's plan and cluster.
  StragglerActors(const Scenario& sc, const RankMap& ranks, const Shortcuts& shortcuts);
  // Returns the clock fraction the actor (tp, cp, dp, pp) runs at (1: nominal).
  double clock_fraction(int tp, int cp, int dp, int pp) const;
  // Returns true when the TP group of the actor holds the GPU with the degraded NVLink.
  bool degraded_nvlink(int tp, int cp, int dp, int pp) const;

 private:
  // The GPUs the actor stands for.
  std::vector<int> gpus_of(int tp, int cp, int dp, int pp) const;

  const RankMap& ranks_;
  int t_ = 1, d_ = 1, replicas_ = 1;
  bool group_ = false;         // one actor per TP group
  bool replica_ = false;       // one_replica
  std::vector<double> clock_;  // by GPU
  int nvlink_gpu_ = -1;        // the GPU with the degraded NVLink, or -1
};

}  // namespace trident

#endif  // TRIDENT_LOWERING_STRAGGLER_SHORTCUTS_H_
