// Checks of cluster.stragglers against the plan (docs/stragglers.md). The spec itself and
// its pure helpers (has_stragglers, without_stragglers, slow_gpus) live beside ClusterSpec in
// config/cluster.h.
#ifndef TRIDENT_CONFIG_STRAGGLERS_H_
#define TRIDENT_CONFIG_STRAGGLERS_H_

#include <vector>

#include "config/checks.h"

namespace trident {

// Returns the GPUs `plan` spans on `cluster`: the highest GPU index it uses, plus one (its GPU
// count, unless plan.gpus_per_island leaves GPUs of each island out).
int plan_gpus_spanned(const PlanSpec& plan, const ClusterSpec& cluster);

// Returns the problems of `cluster`'s stragglers under `plan`: a GPU the plan does not use,
// more slow GPUs than it spans.
std::vector<SpecIssue> straggler_issues(const ClusterSpec& cluster, const PlanSpec& plan);

}  // namespace trident

#endif  // TRIDENT_CONFIG_STRAGGLERS_H_
