// Limits and cross-field checks of cluster, model and plan specs. Pure functions on the typed
// specs, so code that builds specs itself (plan search, sweeps) can validate them the same
// way the YAML loader does.
#ifndef TRIDENT_CONFIG_CHECKS_H_
#define TRIDENT_CONFIG_CHECKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "config/cluster.h"
#include "config/limits.h"
#include "config/model.h"
#include "config/plan.h"
#include "config/scenario.h"

namespace trident {

// One problem found in a spec. `keys` are dotted setting paths, most specific first
// ("plan.data_parallel", then "plan.tensor_parallel"); the loader points the error at the
// first of them written in the user's files.
struct SpecIssue {
  std::vector<std::string> keys;
  std::string message;
};

// Returns the cross-field problems of a cluster (island size, GPU count limit, no peak).
std::vector<SpecIssue> cluster_issues(const ClusterSpec& cluster);

// Returns the cross-field problems of a model (heads divide hidden size, query groups divide
// heads, positive sizes).
std::vector<SpecIssue> model_issues(const ModelSpec& model);

// Returns the problems of a plan that do not involve its batch fields: GPU count,
// divisibility of heads, query groups and layers, schedule rules, precision. Requires
// tensor, pipeline and data to be resolved; batch fields may still be 0.
std::vector<SpecIssue> plan_layout_issues(const PlanSpec& plan, const ModelSpec& model,
                                          const ClusterSpec& cluster);

// Returns the problems of a fully resolved plan on `model` and `cluster`: GPU count,
// divisibility of heads, query groups, layers and batch, schedule rules, precision.
std::vector<SpecIssue> plan_issues(const PlanSpec& plan, const ModelSpec& model,
                                   const ClusterSpec& cluster);

// What one simulated step runs of a plan, as far as its count of SimGrid activities goes: the
// engine's shortcuts that cut activities. lowering/shortcuts.h decides them
// (simulation_activity_issues there fills this in); config only counts.
struct SimulatedScope {
  bool full_fidelity = false;  // one actor per GPU, every ring step
  int replicas = 1;  // data-parallel replicas simulated per stage (plan.data but for one_replica)
  bool fused_tp = false;     // TP collectives timed in closed form inside the passes (fused_tp)
  bool mirrored_tp = false;  // TP collectives lowered for tensor rank 0 only (mirrored_tp)
  // Expert all-to-alls as two flows per member (nic_all_to_all, collapsed_flex).
  bool collapsed_all_to_all = false;
};

// Returns the scope of a step that simulates every data-parallel replica and fuses nothing:
// that of `full_fidelity`, or (false) one above every fast step of `plan`.
SimulatedScope every_replica_scope(const PlanSpec& plan, bool full_fidelity);

// Returns an estimate of the SimGrid activities (compute, flows, sleeps) one simulated step of
// a resolved plan runs within `scope`: an upper bound for the step the engine runs there (it
// assumes no pipeline transfer or TP collective runs as a claimed closed-form wait).
double estimated_sim_activities(const PlanSpec& plan, const ModelSpec& model,
                                const ClusterSpec& cluster, const SimulatedScope& scope);

// Returns the problems of a resolved, otherwise valid plan that would make one simulation
// too large to hold: simulated GPUs, platform routes and schedule instructions against the
// limits in config/limits.h, each named in the message. The loader checks these; the
// activities a step runs depend on the engine's shortcuts and are checked where those are
// decided (activity_limit_issues, called by lowering/shortcuts.h simulation_activity_issues).
std::vector<SpecIssue> simulation_size_issues(const PlanSpec& plan, const ClusterSpec& cluster);

// Returns the problem of a plan whose step, simulated within `scope`, would run more than the
// simulation-activity limit (config/limits.h) by estimated_sim_activities: none or one issue,
// its message naming the estimate, the actors it counts and the limit.
std::vector<SpecIssue> activity_limit_issues(const PlanSpec& plan, const ModelSpec& model,
                                             const ClusterSpec& cluster,
                                             const SimulatedScope& scope);

// Throws ConfigError (cluster or model issue) or PlanError (plan issue) for the first
// problem of `scenario`, located by key only (no file positions): the checks load_scenario
// runs, simulation_size_issues included. Use it for specs built in code; the activity limit
// is lowering/shortcuts.h's simulation_activity_issues.
void validate_scenario(const Scenario& scenario);

// Returns a*b, or -1 when the product overflows 64 bits (inputs must be >= 0).
std::int64_t checked_mul(std::int64_t a, std::int64_t b);

// Returns the GPUs of `cluster` that `plan` may use: all of them, or plan.gpus_per_island of
// each NVLink island (-1 when the count overflows).
std::int64_t usable_gpus(const PlanSpec& plan, const ClusterSpec& cluster);

}  // namespace trident

#endif  // TRIDENT_CONFIG_CHECKS_H_
