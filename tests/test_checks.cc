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
  const SimulatedScope every_fast = every_replica_scope(s.plan, false);
  const SimulatedScope every_full = every_replica_scope(s.plan, true);
  const double fast = estimated_sim_activities(s.plan, s.model, s.cluster, every_fast);
  const double full = estimated_sim_activities(s.plan, s.model, s.cluster, every_full);
  CHECK(fast > 46344);  // measured with every replica simulated: an upper bound
  CHECK(fast < limits::kMaxSimActivities / 4);  // fits even counting every replica
  CHECK(full > 10 * fast);
  CHECK(simulation_size_issues(s.plan, s.cluster).empty());
  CHECK(activity_limit_issues(s.plan, s.model, s.cluster, every_fast).empty());
  // GPT-3 at full fidelity runs for more than ten minutes: refused.
  const auto issues = activity_limit_issues(s.plan, s.model, s.cluster, every_full);
  REQUIRE(issues.size() == 1);
  CHECK_THAT(issues[0].message, Catch::Contains("or --fidelity fast"));
  CHECK_THAT(issues[0].message, Catch::Contains("pipeline_parallel × data_parallel × "
                                                "tensor_parallel actors"));
  const Scenario tiny = load_scenario(repo("scenarios/tiny.yaml"), {});
  CHECK(activity_limit_issues(tiny.plan, tiny.model, tiny.cluster,
                              every_replica_scope(tiny.plan, true))
            .empty());
}

TEST_CASE("the activity estimate counts the replicas simulated and fused TP collectives",
          "[validate][limits]") {
  Scenario s = load_scenario(repo("scenarios/gpt3-175b-3d.yaml"), {});
  s.plan.num_microbatches = 4096;  // d = 16 replicas of 8 stages
  s.plan.global_batch_size = 4096 * 16;
  const SimulatedScope every = every_replica_scope(s.plan, false);
  REQUIRE(every.replicas == 16);
  SimulatedScope one = every;
  one.replicas = 1;
  SimulatedScope fused = one;
  fused.fused_tp = true;
  const auto estimate = [&](const SimulatedScope& scope) {
    return estimated_sim_activities(s.plan, s.model, s.cluster, scope);
  };
  // Actors and data-parallel members scale with the replicas simulated.
  CHECK(estimate(one) == Approx(estimate(every) / 16));
  CHECK(estimate(fused) < estimate(one) / 10);
  // Full fidelity simulates every replica whatever the scope says.
  SimulatedScope full = one;
  full.full_fidelity = true;
  CHECK(estimate(full) == estimate(every_replica_scope(s.plan, true)));
  // The message names the actors it counted.
  const auto all = activity_limit_issues(s.plan, s.model, s.cluster, every);
  REQUIRE(all.size() == 1);
  CHECK_THAT(all[0].message,
             Catch::Contains("on each of pipeline_parallel × data_parallel actors"));
  CHECK(all[0].keys.front() == "plan.num_microbatches");
  s.plan.num_microbatches = 4096 * 8;
  s.plan.global_batch_size = 4096 * 8 * 16;
  const auto one_replica = activity_limit_issues(s.plan, s.model, s.cluster, one);
  REQUIRE(one_replica.size() == 1);
  CHECK_THAT(one_replica[0].message,
             Catch::Contains("on each of pipeline_parallel × 1 actors (1 of 16 data-parallel "
                             "replicas simulated), a few per layer each"));
}

TEST_CASE("sequence parallelism needs a sequence divisible by tensor_parallel", "[config]") {
  Scenario s = load_scenario(kGpt3, {});
  s.plan.sequence_parallel = true;
  CHECK(plan_issues(s.plan, s.model, s.cluster).empty());
  s.model.seq_length = 2050;  // not a multiple of t = 8
  const std::vector<SpecIssue> issues = plan_issues(s.plan, s.model, s.cluster);
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].keys.front() == "plan.sequence_parallel");
  CHECK_THAT(issues[0].message, Catch::Contains("model.seq_length 2050 over tensor_parallel 8"));
  s.plan.sequence_parallel = false;  // without it the sequence is not split over t
  CHECK(plan_issues(s.plan, s.model, s.cluster).empty());
  // Through the loader: exit-2 input naming the key, with --set's position.
  CHECK_THAT(load_error(kGpt3, {"plan.sequence_parallel=true", "model.seq_length=2050"}),
             Catch::Contains("plan.sequence_parallel: sequence_parallel splits"));
}

TEST_CASE("oversubscription on one switch and reserved memory past the GPU's are refused",
          "[config]") {
  Scenario s = load_scenario(kGpt3, {});
  CHECK(cluster_issues(s.cluster).empty());
  s.cluster.network.topology = Topology::kSingleSwitch;
  CHECK(cluster_issues(s.cluster).empty());  // oversubscription 1: nothing to refuse
  s.cluster.network.oversubscription = 2;
  std::vector<SpecIssue> issues = cluster_issues(s.cluster);
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].keys.front() == "cluster.network.oversubscription");
  s.cluster.network.topology = Topology::kFatTree;
  CHECK(cluster_issues(s.cluster).empty());
  s.cluster.gpu.memory_reserved_bytes = s.cluster.gpu.memory_bytes - 1;
  CHECK(cluster_issues(s.cluster).empty());
  s.cluster.gpu.memory_reserved_bytes = s.cluster.gpu.memory_bytes;
  issues = cluster_issues(s.cluster);
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].keys.front() == "cluster.gpu.memory_reserved");
  CHECK_THAT(issues[0].message, Catch::Contains("is not below the GPU's memory of 80 GiB"));
  CHECK_THAT(load_error(kGpt3, {"cluster.gpu.memory_reserved=81 GiB"}),
             Catch::Contains("cluster.gpu.memory_reserved: memory_reserved 81 GiB"));
  CHECK_THAT(load_error(kGpt3, {"cluster.network.topology=single-switch",
                                "cluster.network.oversubscription=1.5"}),
             Catch::Contains("oversubscription 1.5 has no effect on topology single-switch"));
}

TEST_CASE("the router's top-k is checked on the model alone", "[config]") {
  ModelSpec m = load_model_file(repo("configs/models/mixtral-8x7b.yaml"));
  CHECK(model_issues(m).empty());
  m.moe_router_topk = 9;
  const std::vector<SpecIssue> issues = model_issues(m);
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].keys.front() == "model.moe_router_topk");
  CHECK_THAT(issues[0].message, Catch::Contains("moe_router_topk 9 exceeds num_experts 8"));
  m.moe_router_topk = 2;
  m.moe_router_num_groups = 3;  // 8 experts in 3 groups
  m.moe_router_group_topk = 1;
  CHECK(model_issues(m).size() == 1);
}
