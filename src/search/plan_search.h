// The search of `trident plan` without the simulations: every candidate of the space with
// its exact memory and step lower bound, ordered for simulation, and the rule that says
// which simulated candidates prove the top K. Pure (no SimGrid); the command runs the
// simulations (src/cli/plan_command.cc).
#ifndef TRIDENT_SEARCH_PLAN_SEARCH_H_
#define TRIDENT_SEARCH_PLAN_SEARCH_H_

#include <string>
#include <vector>

#include "config/scenario.h"
#include "search/plan_bound.h"
#include "search/plan_space.h"

namespace trident {

// A candidate that fits, with its memory and bound.
struct BoundedCandidate {
  Candidate candidate;
  long index = 0;           // position in enumeration order (shards split on it)
  double margin_bytes = 0;  // memory_margin_bytes: HBM left on the fullest GPU (>= 0)
  StepBound bound;
};

struct SpaceSummary {
  EnumerationStats enumeration;
  long long enumerated = 0;               // candidates that passed every rule and check
  long long pruned_by_memory = 0;         // of those, the ones that do not fit
  std::vector<BoundedCandidate> fitting;  // the others, by increasing bound (then index)
  // Of those built and found not to fit, the one closest to fitting: how many bytes its
  // fullest GPU lacks (+inf when none was built) and its label.
  double least_memory_short_bytes = 0;
  std::string least_memory_short_label;
};

// Returns the rule that binds when no candidate fits (call it only then), in a few words:
// "no candidate passes the rules; \"RULE\" pruned most (N)", "memory: none of N candidates
// fits ...; the closest, LABEL, lacks X GiB", or "" when neither applies.
std::string no_fit_reason(const SpaceSummary& summary);

// Returns `base` with `plan` in place of its plan.
Scenario with_plan(const Scenario& base, const PlanSpec& plan);

// Enumerates the space of `context` within `limits`, builds each candidate's workload on
// `base` (its cluster, model and unsearched plan fields), drops those whose memory does not
// fit (memory_margin_bytes < 0, the report's fits verdict) and bounds the others. With
// `shard_count` > 1, keeps only the candidates whose enumeration index is `shard_index`
// modulo `shard_count`. `jobs` > 1 bounds blocks of candidates in that many forked children.
// A plan that does not fit with full recomputation does not fit with selective or none
// either (more activations, the rest equal): those are counted as not fitting unbuilt.
// Throws ConfigError (file "--max-work") before building anything when this shard's
// candidates times the model's layers exceed context.max_bound_work.
SpaceSummary bound_space(const Scenario& base, const SearchContext& context,
                         const SpaceLimits& limits, int shard_index = 0, int shard_count = 1,
                         int jobs = 1);

// Steps of simulated candidates, by position in `fitting`: NaN while not simulated, +inf
// when the simulation failed (it then ranks nowhere).
//
// Returns the shortest prefix of `fitting` that proves the `top` fastest: after it, the next
// candidate's bound exceeds the top-th best step within the prefix (or nothing is left). Sets
// *decided to false, and returns the first unknown position, when a step it needs is NaN.
// The result depends only on the steps, not on the order simulations finished in.
size_t proven_prefix(const std::vector<BoundedCandidate>& fitting, const std::vector<double>& steps,
                     size_t top, bool* decided);

// Whether position `pos` may be needed, judged from the steps known before it: fewer than
// `top` of them known, or fitting[pos]'s bound at most the top-th best of them. Never false
// for a position proven_prefix needs (known steps only lower the top-th best).
bool worth_simulating(const std::vector<BoundedCandidate>& fitting,
                      const std::vector<double>& steps, size_t top, size_t pos);

}  // namespace trident

#endif  // TRIDENT_SEARCH_PLAN_SEARCH_H_
