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

// Returns an estimate of the SimGrid activities (compute, flows, collective steps) one
// simulated step of a resolved plan runs: an upper bound for `fast` fidelity (it assumes no
// tensor-parallel all-reduce is timed in closed form), or for `full` when full_fidelity.
double estimated_sim_activities(const PlanSpec& plan, const ModelSpec& model,
                                const ClusterSpec& cluster, bool full_fidelity);

// Returns the problems of a resolved, otherwise valid plan that would make one simulation
// too large to run in minutes: simulated GPUs, platform routes, schedule instructions and
// estimated activities against the limits in config/limits.h, each named in the message.
// The loader checks `fast` fidelity; a caller running `full` checks again with full_fidelity.
std::vector<SpecIssue> simulation_size_issues(const PlanSpec& plan, const ModelSpec& model,
                                              const ClusterSpec& cluster,
                                              bool full_fidelity = false);

// Throws PlanError (located at the scenario file and the plan key) for the first of
// simulation_size_issues of a loaded scenario at full fidelity; load_scenario has checked
// fast fidelity already.
void check_full_fidelity_size(const Scenario& scenario);

// Throws ConfigError (cluster or model issue) or PlanError (plan issue) for the first
// problem of `scenario`, located by key only (no file positions). Use it for specs built in
// code; load_scenario already runs these checks.
void validate_scenario(const Scenario& scenario);

// Returns a*b, or -1 when the product overflows 64 bits (inputs must be >= 0).
std::int64_t checked_mul(std::int64_t a, std::int64_t b);

// Returns the GPUs of `cluster` that `plan` may use: all of them, or plan.gpus_per_island of
// each NVLink island (-1 when the count overflows).
std::int64_t usable_gpus(const PlanSpec& plan, const ClusterSpec& cluster);

}  // namespace trident

#endif  // TRIDENT_CONFIG_CHECKS_H_
