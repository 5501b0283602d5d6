// Checks of a resolved scenario (config/checks): specs built in code, 64-bit products, and the
// simulation-size estimate.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config/checks.h"
#include "config_support.h"

using namespace trident;
using namespace trident::testing;

TEST_CASE("validate_scenario checks specs built in code", "[config]") {
  Scenario s = load_scenario(kGpt3, {});
  CHECK_NOTHROW(validate_scenario(s));
  s.plan.tensor = 7;
  CHECK_THROWS_AS(validate_scenario(s), PlanError);
  s = load_scenario(kGpt3, {});
  s.plan.num_microbatches = 10;  // global batch no longer m * b * d
  CHECK_THROWS_WITH(validate_scenario(s), Catch::Contains("plan.global_batch_size"));
  s = load_scenario(kGpt3, {});
  s.cluster.nvlink.island_size = 3;
  CHECK_THROWS_WITH(validate_scenario(s), Catch::Contains("cluster.nvlink.island_size"));
}

TEST_CASE("products are checked in 64 bits", "[config]") {
  CHECK(checked_mul(1 << 30, 1 << 30) == (std::int64_t{1} << 60));
  CHECK(checked_mul(std::int64_t{1} << 40, std::int64_t{1} << 40) == -1);
}

TEST_CASE("the simulation-size estimate accounts for fidelity", "[validate][limits]") {
  const Scenario s = load_scenario(repo("scenarios/gpt3-175b-3d.yaml"), {});
  const double fast = estimated_sim_activities(s.plan, s.model, s.cluster, false);
  const double full = estimated_sim_activities(s.plan, s.model, s.cluster, true);
  CHECK(fast > 46344);  // measured: an upper bound
  CHECK(fast < 1e7);
  CHECK(full > 10 * fast);
  CHECK(simulation_size_issues(s.plan, s.model, s.cluster, false).empty());
  // GPT-3 at full fidelity runs for more than ten minutes: refused.
  const auto issues = simulation_size_issues(s.plan, s.model, s.cluster, true);
  REQUIRE(issues.size() == 1);
  CHECK_THAT(issues[0].message, Catch::Contains("or --fidelity fast"));
  const Scenario tiny = load_scenario(repo("scenarios/tiny.yaml"), {});
  CHECK(simulation_size_issues(tiny.plan, tiny.model, tiny.cluster, true).empty());
}
