// The shortcuts a simulated step takes, decided in one place from the scenario and the
// fidelity. Each is exact in a stated domain (or, for collapsed ring steps, exact without
// competing traffic); the engine runs what this record says, the Timeline carries it, and the
// trace shows it. The simulation-activity limit is checked here too, on what the shortcuts
// leave to simulate. Pure; no SimGrid.
#ifndef TRIDENT_LOWERING_SHORTCUTS_H_
#define TRIDENT_LOWERING_SHORTCUTS_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "config/checks.h"
#include "config/scenario.h"
#include "layout/rank_map.h"

namespace trident {

enum class Fidelity {
  // One actor per tensor-parallel group (its GPUs run identical programs); its collectives and
  // transfers still move every GPU's bytes. TP collectives with no competing traffic are timed
  // in closed form and fused with the surrounding compute; ring steps are collapsed into one
  // flow per edge.
  kFast,
  // One actor per GPU; every collective is simulated ring step by ring step. For validation.
  kFull,
};

// Returns "fast" or "full".
const char* fidelity_name(Fidelity f);
// Parses "fast" or "full" into *out; returns false (leaving *out) for anything else.
bool parse_fidelity(const std::string& name, Fidelity* out);

struct Shortcut {
  bool taken = false;
  std::string reason;  // one line: why it is taken (where it is exact), or why not
};

struct Shortcuts {
  Fidelity fidelity = Fidelity::kFast;
  // One actor per TP group, whose GPUs run identical programs.
  Shortcut group_actor;
  // TP collectives timed in closed form (island_collective_time) and fused into the passes.
  Shortcut fused_tp;
  // One tensor rank's pipeline and data-parallel flows time the whole TP group's.
  Shortcut one_rank_flows;
  // TP collectives simulated for tensor rank 0 (with one_rank_flows): its ring edges as flows,
  // the other NVLink edges in closed form; when the groups fill the islands they span
  // (tp_fills_islands), its inter-island edge mirrored out through its NIC and back and every
  // NVLink stage (no other traffic there) in closed form.
  Shortcut mirrored_tp;
  bool tp_fills_islands = false;
  // Data-parallel replicas 0..replicas-1 simulated for all: one whose ring edge is mirrored out
  // through its NIC and back (one member per island), or those that fill the islands they
  // touch, whose inter-island edges are mirrored so.
  Shortcut one_replica;
  int replicas = 1;
  // Identical consecutive ring steps collapsed into one flow per edge.
  Shortcut collapsed_steps;
  // Expert all-to-alls: each member's cross-island traffic as one flow through its NIC
  // (lowering/all_to_all_shortcut.h).
  Shortcut nic_all_to_all;
  // Flex dispatches: each member's RDMA traffic as one flow through its NIC and its NVLink
  // traffic as one flow to its island neighbour (lowering/all_to_all_shortcut.h).
  Shortcut collapsed_flex;
  // Pipeline transfers and passes of compute and TP collectives whose flows find their links
  // free run as one closed-form wait (lowering/link_claims.h), runs meeting through flows
  // alone in their groups timed together (max-min fluid sharing); a flow on those links
  // while their windows are open, or any other overlap, turns what is left back into flows
  // at that instant.
  Shortcut claimed_runs;

  // Data-parallel replicas simulated per stage: `replicas` with one_replica, else plan.data (each
  // with all plan.context context ranks, between which the CP ring runs).
  int replicas_simulated(const PlanSpec& plan) const {
    return one_replica.taken ? replicas : plan.data;
  }
};

// Returns the shortcuts a step of `scenario` simulated at `fidelity` takes. Requires a validated
// scenario whose plan fits its cluster.
Shortcuts decide_shortcuts(const Scenario& scenario, Fidelity fidelity);
// The same with the rank map of the scenario's plan and cluster given (its predicates worked
// out once for many plans of one layout); null only with full fidelity.
Shortcuts decide_shortcuts(const Scenario& scenario, Fidelity fidelity, const RankMap* ranks);

// Returns what a step taking `shortcuts` simulates of `plan`, for the activity estimate:
// replicas_simulated (every replica at full fidelity), fused_tp, mirrored_tp, and
// nic_all_to_all or collapsed_flex.
SimulatedScope simulated_scope(const PlanSpec& plan, const Shortcuts& shortcuts);

// Returns the scope with the fewest activities a fast step of `plan` on `model` can have,
// whatever its placement and overlap settings: one replica with TP fused, or every replica
// unfused (all-to-alls collapsed) where expert parallelism keeps one_replica and fused_tp
// off. A lower bound for pruning plans before those fields are chosen.
SimulatedScope fewest_activities_scope(const PlanSpec& plan, const ModelSpec& model);

// The fast-fidelity scopes (simulated_scope of decide_shortcuts) of the plans of one search on
// one model and cluster, decided once per shortcut key: the plan fields decide_shortcuts reads
// (the rank map's sizes, placement and islands used; expert parallelism and its dispatcher;
// sharding, overlap_param_gather and overlap_grad_reduce). A field decide_shortcuts comes to
// read must enter the key (shortcuts.cc shortcut_key).
class ScopeMemo {
 public:
  // Returns simulated_scope(plan, decide_shortcuts(plan on model and cluster, kFast)).
  // Requires every call with this memo to have the same model and cluster.
  const SimulatedScope& fast_scope(const PlanSpec& plan, const ModelSpec& model,
                                   const ClusterSpec& cluster);

 private:
  std::map<std::vector<int>, SimulatedScope> scopes_;
  std::map<std::vector<int>, RankMap> ranks_;  // by layout: t, cp, p, d, gpus per island, order
};

// Returns the problem (none or one) of a step of `scenario` simulated at `fidelity` that would
// run more than the simulation-activity limit (config/checks.h activity_limit_issues), counting
// the actors and collectives that fidelity's shortcuts really simulate: fast fidelity only
// replicas_simulated data-parallel replicas, full every one. Requires a scenario that loaded
// (load_scenario, or validate_scenario for specs built in code). Cheap when the plan is small:
// the shortcuts are decided only when every replica unfused would be over the limit.
std::vector<SpecIssue> simulation_activity_issues(const Scenario& scenario, Fidelity fidelity);
// The same for a plan on `model` and `cluster` (the plan search's candidates), deciding the
// shortcuts through `memo` when given.
std::vector<SpecIssue> simulation_activity_issues(const PlanSpec& plan, const ModelSpec& model,
                                                  const ClusterSpec& cluster, Fidelity fidelity,
                                                  ScopeMemo* memo = nullptr);

// Throws PlanError, located at the scenario file and the issue's plan key, for the issue of
// simulation_activity_issues; at full fidelity the message starts "at --fidelity full, ".
// Every command that simulates a loaded scenario calls it first.
void check_simulation_activities(const Scenario& scenario, Fidelity fidelity);

// Returns the shortcuts of `s` with their names ("fused_tp", ...), in declaration order.
std::vector<std::pair<const char*, const Shortcut*>> named_shortcuts(const Shortcuts& s);

}  // namespace trident

#endif  // TRIDENT_LOWERING_SHORTCUTS_H_
