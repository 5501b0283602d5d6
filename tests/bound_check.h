// A check shared by the plan-bound tests: on a deterministic sample of a limited space, the
// step lower bound is never above the simulated step and not far below it.
#ifndef TRIDENT_TESTS_BOUND_CHECK_H_
#define TRIDENT_TESTS_BOUND_CHECK_H_

#include <catch2/catch.hpp>

#include "plan_support.h"
#include "search/plan_search.h"
#include "sim_report.h"

namespace trident::testing {

// Simulates about `samples` candidates of `base`'s space under `limits` (every n-th in bound
// order) and checks min_ratio x step <= bound <= step for each. Requires the space to hold
// at least `samples` fitting candidates.
inline void check_bounds_near_steps(const Scenario& base, const SpaceLimits& limits, size_t samples,
                                    double min_ratio) {
  const SpaceSummary space = bound_space(base, context_of(base), limits);
  REQUIRE(space.fitting.size() >= samples);
  for (const BoundedCandidate& c : every_nth(space.fitting, space.fitting.size() / samples)) {
    CAPTURE(candidate_label(c.candidate));
    const double step = simulated_step(with_plan(base, c.candidate.plan));
    CAPTURE(c.bound.total_s, step);
    CHECK(c.bound.total_s <= step * (1 + 1e-9));
    CHECK(c.bound.total_s >= min_ratio * step);
  }
}

}  // namespace trident::testing

#endif  // TRIDENT_TESTS_BOUND_CHECK_H_
