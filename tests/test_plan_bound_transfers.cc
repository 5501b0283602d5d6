// The step lower bound of `trident plan` (src/search/plan_bound.h) on the transfers it once
// counted 0 for: context-parallel ring steps with tensor parallelism (whose attention blocks it
// missed as well, so the bound fell below the compute alone), and pipeline transfers through
// the NICs under the interleaved schedule. Never above the simulated step, and close to it.

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "bound_check.h"
#include "layout/program.h"
#include "plan_support.h"
#include "search/plan_bound.h"
#include "search/plan_search.h"
#include "sim_report.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

// The largest number of seconds one stage computes in a step (every pass of every
// micro-batch): no schedule can finish before that.
double busiest_compute(const Scenario& sc, const Workload& w) {
  double busiest = 0;
  for (const StageWork& st : w.stages) {
    double per_microbatch = 0;
    for (const auto& chunk : st.chunks) {
      per_microbatch += chunk.forward.compute_s + chunk.backward.compute_s;
    }
    busiest = std::max(busiest, sc.plan.num_microbatches * per_microbatch);
  }
  return busiest;
}

}  // namespace

TEST_CASE("plan search lower bound counts context-parallel ring steps with tensor parallelism") {
  // Llama 3 8B at 16K tokens on 2 DGX H100 nodes: t = 2, cp = 2 or 4, so rings that stay in a
  // node and rings that span both.
  const Scenario base = search_base("dgx-h100", "llama3-8b", 2, 16, 16384);
  SpaceLimits limits;
  limits.values = {{"plan.tensor_parallel", {"2"}}, {"plan.context_parallel", {"2", "4"}}};
  const SpaceSummary space = bound_space(base, context_of(base), limits);
  REQUIRE(space.fitting.size() >= 6);
  for (const BoundedCandidate& c : every_nth(space.fitting, space.fitting.size() / 6)) {
    CAPTURE(candidate_label(c.candidate));
    const Scenario sc = with_plan(base, c.candidate.plan);
    const std::vector<StageProgram> programs = build_programs(sc.plan);
    const Workload w = build_workload(sc, programs);
    const double step = simulated_step(sc);
    CAPTURE(c.bound.total_s, step);
    CHECK(c.bound.total_s <= step * (1 + 1e-9));
    CHECK(c.bound.total_s >= busiest_compute(sc, w));
    CHECK(c.bound.total_s >= 0.9 * step);
  }
}

TEST_CASE("plan search lower bound counts pipeline transfers through the NICs") {
  // tiny-2node: islands of 4 GPUs, so with t = 4 and p = 2 every pipeline hop crosses the
  // network; interleaved with many virtual stages the transfers are a large part of the step.
  const Scenario base = search_base("tiny-2node", "llama3-8b", 2, 16, 4096);
  SpaceLimits limits;
  limits.values = {{"plan.tensor_parallel", {"4"}},
                   {"plan.pipeline_parallel", {"2"}},
                   {"plan.schedule", {"interleaved-1f1b"}}};
  check_bounds_near_steps(base, limits, 4, 0.9);
}
