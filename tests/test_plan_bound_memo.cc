// The memo of the plan search's lower bound (BoundMemo, src/search/plan_bound.h) changes no
// bound: shared by every candidate of a space, it gives the same doubles as fuse_pass and a
// fresh rank map per candidate.
#include <catch2/catch.hpp>

#include "plan_support.h"
#include "search/plan_bound.h"
#include "search/plan_search.h"

using namespace trident;
using namespace trident::testing;

TEST_CASE("plan bound with a memo shared across candidates equals the bound without one") {
  // Islands of 4 GPUs on two nodes (TP and DP groups inside and across islands), and TP
  // overlap (pipeline and ring-exchange chunks) in the wide space.
  const Scenario base = search_base("tiny-2node", "llama3-8b", 2, 32, 2048);
  SearchContext context = context_of(base);
  context.wide = true;
  EnumerationStats stats;
  const std::vector<Candidate> all = enumerate_candidates(context, {}, &stats);
  BoundMemo memo;
  int overlapped = 0, checked = 0;
  for (const Candidate& c : every_nth(all, 11)) {
    const Scenario sc = with_plan(base, c.plan);
    const std::vector<StageProgram> programs = build_programs(sc.plan);
    const Workload w = build_workload(sc, programs);
    const StepBound fresh = step_lower_bound(sc, w, programs);
    const StepBound memoized = step_lower_bound(sc, w, programs, &memo);
    CAPTURE(candidate_label(c));
    CHECK(memoized.total_s == fresh.total_s);
    CHECK(memoized.compute_s == fresh.compute_s);
    CHECK(memoized.pipeline_s == fresh.pipeline_s);
    CHECK(memoized.dp_s == fresh.dp_s);
    overlapped += c.plan.tp_comm_overlap ? 1 : 0;
    ++checked;
  }
  CHECK(checked > 100);
  CHECK(overlapped > 10);
}
