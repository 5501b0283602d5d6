// Checks of cluster.stragglers against the plan (docs/stragglers.md). The spec itself and
// its pure helpers (has_stragglers, without_stragglers, slow_gpus) live beside ClusterSpec in
// config/cluster.h.
#ifndef TRIDENT_CONFIG_STRAGGLERS_H_
#define TRIDENT_CONFIG_STRAGGLERS_H_

#include <vector>

#include "config/checks.h"

namespace trident {

// Returns the problems of `cluster`'s stragglers for a plan of `plan_gpus` GPUs: a rank that is
// not one of them, more slow GPUs than there are.
std::vector<SpecIssue> straggler_issues(const ClusterSpec& cluster, int plan_gpus);

}  // namespace trident

#endif  // TRIDENT_CONFIG_STRAGGLERS_H_
