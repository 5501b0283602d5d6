// The token dispatcher in the plan space (src/search/plan_dimensions.cc): with --wide and
// EP > 1, alltoall and flex; candidates meet the flex dispatcher's checks and load.
#include <catch2/catch.hpp>
#include <set>

#include "config/checks.h"
#include "plan_support.h"
#include "search/plan_space.h"

using namespace trident;
using namespace trident::testing;

TEST_CASE("wide plan search tries the flex dispatcher beside alltoall with EP above 1",
          "[plan][flex]") {
  Scenario base = search_base("tiny-2node", "mixtral-8x7b", 2, 32, 2048);
  base.plan.moe_dispatcher = MoeDispatcher::kAllToAll;
  SearchContext context = context_of(base);
  EnumerationStats stats;
  std::set<MoeDispatcher> narrow;
  for (const Candidate& c : enumerate_candidates(context, {}, &stats)) {
    narrow.insert(c.plan.moe_dispatcher);
  }
  CHECK(narrow == std::set<MoeDispatcher>{MoeDispatcher::kAllToAll});
  context.wide = true;
  std::set<MoeDispatcher> wide;
  for (const Candidate& c : enumerate_candidates(context, {}, &stats)) {
    const PlanSpec& p = c.plan;
    wide.insert(p.moe_dispatcher);
    if (p.expert_parallel == 1) CHECK(p.moe_dispatcher == MoeDispatcher::kAllToAll);
    if (p.moe_dispatcher == MoeDispatcher::kFlex) {
      CHECK_FALSE(p.moe_shared_expert_overlap);
      CHECK(plan_issues(p, base.model, base.cluster).empty());
    }
  }
  CHECK(wide == std::set<MoeDispatcher>{MoeDispatcher::kAllToAll, MoeDispatcher::kFlex});
}
