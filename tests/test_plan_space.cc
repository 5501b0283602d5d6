// The plan space of `trident plan` (src/search): every candidate is a plan `simulate`
// accepts, the table's rules hold, --fix/--vary limit it, the shortcut memo its activity
// check uses, and the proving rule of the search.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <set>

#include "config/checks.h"
#include "core/errors.h"
#include "lowering/shortcuts.h"
#include "plan_support.h"
#include "search/plan_search.h"

using namespace trident;
using namespace trident::testing;

namespace {

// Loads the base with the candidate's overrides, as `trident simulate --set` would.
Scenario load_candidate(const std::string& cluster, const std::string& model, int nodes, int gbs,
                        int seq, const Candidate& c) {
  const std::string text = "cluster: " + cluster + "\nmodel: " + model + "\nplan: {}\n";
  std::vector<std::string> sets = {"cluster.nodes=" + std::to_string(nodes),
                                   "model.seq_length=" + std::to_string(seq),
                                   "plan.global_batch_size=" + std::to_string(gbs)};
  for (const std::string& o : candidate_overrides(c)) sets.push_back(o);
  return load_scenario_text(text, "plan-test", sets);
}

}  // namespace

TEST_CASE("every candidate of the plan space loads and validates as simulate loads it") {
  struct Case {
    std::string cluster, model;
    int nodes, gbs, seq;
  };
  const std::vector<Case> cases = {{"tiny-2node", "llama3-8b", 2, 64, 2048},
                                   {"dgx-h100", "llama3-70b", 8, 512, 8192},
                                   {"dgx-a100-superpod", "gpt3-175b", 128, 1536, 2048},
                                   {"gb200-nvl72", "gpt-1t", 36, 2048, 2048}};
  for (const Case& k : cases) {
    CAPTURE(k.cluster, k.model);
    const Scenario base = search_base(k.cluster, k.model, k.nodes, k.gbs, k.seq);
    EnumerationStats stats;
    const std::vector<Candidate> all = enumerate_candidates(context_of(base), {}, &stats);
    REQUIRE(all.size() > 50);
    // The loader's own checks never had to refuse a candidate the table proposed.
    for (const auto& [rule, n] : stats.pruned) CHECK(rule.rfind("checks:", 0) != 0);
    for (const Candidate& c : every_nth(all, all.size() / 40 + 1, 7)) {
      CAPTURE(candidate_label(c));
      const Scenario sc = load_candidate(k.cluster, k.model, k.nodes, k.gbs, k.seq, c);
      CHECK_NOTHROW(validate_scenario(sc));
      CHECK(simulation_activity_issues(sc, Fidelity::kFast).empty());
      CHECK(sc.plan.tensor == c.plan.tensor);
      CHECK(sc.plan.pipeline == c.plan.pipeline);
      CHECK(sc.plan.data == c.plan.data);
      CHECK(sc.plan.gpus() == base.cluster.total_gpus());
      CHECK(sc.plan.num_microbatches == c.plan.num_microbatches);
      CHECK(sc.plan.virtual_stages == c.plan.virtual_stages);
      CHECK(sc.plan.pipeline_layers == c.plan.pipeline_layers);
      CHECK(sc.plan.schedule == c.plan.schedule);
      CHECK(sc.plan.placement == c.plan.placement);
      CHECK(sc.plan.dp_sharding == c.plan.dp_sharding);
      CHECK(sc.plan.tp_comm_overlap == c.plan.tp_comm_overlap);
      CHECK(sc.plan.overlap_param_gather == c.plan.overlap_param_gather);
      // Megatron's rules, restated: heads and query groups over t, the batch over mbs * d,
      // interleaving with m a multiple of p.
      CHECK(base.model.num_attention_heads % c.plan.tensor == 0);
      CHECK(base.model.num_query_groups % c.plan.tensor == 0);
      CHECK(k.gbs % (c.plan.micro_batch_size * c.plan.data) == 0);
      if (c.plan.schedule == ScheduleKind::kInterleaved1F1B) {
        CHECK(c.plan.num_microbatches % c.plan.pipeline == 0);
      }
    }
  }
}

TEST_CASE(
    "plan space candidates are distinct and an uneven layer split appears where layers do not "
    "divide") {
  // Llama 3 8B: 32 layers; p = 3 does not divide them on 24 GPUs.
  const Scenario base = search_base("dgx-h100", "llama3-8b", 3, 48, 4096);
  EnumerationStats stats;
  const std::vector<Candidate> all = enumerate_candidates(context_of(base), {}, &stats);
  std::set<std::vector<std::string>> seen;
  bool uneven = false;
  for (const Candidate& c : all) {
    CHECK(seen.insert(candidate_overrides(c)).second);
    if (c.plan.pipeline == 3) {
      REQUIRE(c.plan.pipeline_layers.size() == 3u * c.plan.virtual_stages);
      uneven = true;
    }
  }
  CHECK(uneven);
}

TEST_CASE("the search's shortcut memo gives the scope decide_shortcuts gives each candidate") {
  // A MoE model over two H100 nodes, every option open: expert parallelism and its
  // dispatchers, sharding, overlap_param_gather and placements all enter the shortcuts.
  const Scenario base = search_base("dgx-h100", "qwen3-30b-a3b", 2, 32, 2048);
  SearchContext context = context_of(base);
  context.wide = true;
  SpaceLimits limits;
  limits.values.push_back({"plan.moe_token_dispatcher_type", {"allgather", "alltoall", "flex"}});
  EnumerationStats stats;
  const std::vector<Candidate> all = enumerate_candidates(context, limits, &stats);
  REQUIRE(all.size() > 100);
  ScopeMemo memo;
  std::set<bool> one_replica, fused, collapsed;
  for (const Candidate& c : every_nth(all, all.size() / 150 + 1, 3)) {
    CAPTURE(candidate_label(c));
    const Scenario sc = with_plan(base, c.plan);
    const Shortcuts s = decide_shortcuts(sc, Fidelity::kFast);
    const SimulatedScope direct = simulated_scope(sc.plan, s);
    const SimulatedScope& memoized = memo.fast_scope(c.plan, base.model, base.cluster);
    CHECK(memoized.full_fidelity == direct.full_fidelity);
    CHECK(memoized.replicas == direct.replicas);
    CHECK(memoized.fused_tp == direct.fused_tp);
    CHECK(memoized.mirrored_tp == direct.mirrored_tp);
    CHECK(memoized.collapsed_all_to_all == direct.collapsed_all_to_all);
    one_replica.insert(s.one_replica.taken);
    fused.insert(s.fused_tp.taken);
    collapsed.insert(direct.collapsed_all_to_all);
  }
  // The sample took and left each shortcut the memo keeps.
  CHECK(one_replica.size() == 2);
  CHECK(fused.size() == 2);
  CHECK(collapsed.size() == 2);
}

TEST_CASE("plan space limits: --fix pins a field, --vary restricts it, unknown keys are refused") {
  const Scenario base = search_base("tiny-2node", "llama3-8b", 2, 64, 2048);
  SpaceLimits limits;
  limits.values = {{"plan.tensor_parallel", {"2"}},
                   {"plan.schedule", {"1f1b"}},
                   {"plan.recompute", {"full", "selective"}}};
  EnumerationStats stats;
  const std::vector<Candidate> all = enumerate_candidates(context_of(base), limits, &stats);
  REQUIRE(!all.empty());
  for (const Candidate& c : all) {
    CHECK(c.plan.tensor == 2);
    CHECK(c.plan.schedule == ScheduleKind::k1F1B);
    CHECK(c.plan.recompute != Recompute::kNone);
  }
  SpaceLimits bad;
  bad.values = {{"plan.tensor", {"2"}}};
  CHECK_THROWS_AS(enumerate_candidates(context_of(base), bad, &stats), ConfigError);
  SpaceLimits bad_value;
  bad_value.values = {{"plan.schedule", {"zigzag"}}};
  CHECK_THROWS_AS(enumerate_candidates(context_of(base), bad_value, &stats), ConfigError);
  // A value Megatron refuses (t = 3 does not divide 32 heads) is pruned by its rule.
  SpaceLimits three;
  three.values = {{"plan.tensor_parallel", {"3"}}};
  EnumerationStats three_stats;
  CHECK(enumerate_candidates(context_of(base), three, &three_stats).empty());
  REQUIRE(!three_stats.pruned.empty());
  CHECK(three_stats.pruned.front().first == "plan.tensor_parallel: t divides the GPUs");
}

TEST_CASE("the proving prefix stops at the first bound above the top-th best step") {
  std::vector<BoundedCandidate> fitting(6);
  const double bounds[] = {1.0, 1.5, 2.0, 2.5, 3.0, 4.0};
  for (int i = 0; i < 6; ++i) fitting[i].bound.total_s = bounds[i];
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  bool decided = false;
  // Steps 2.2, 1.6, then 2.4: after three, the 2nd best is 2.2 < 2.5: three suffice for top 2.
  std::vector<double> steps = {2.2, 1.6, 2.4, nan, nan, nan};
  CHECK(proven_prefix(fitting, steps, 2, &decided) == 3);
  CHECK(decided);
  // Top 1: best 1.6 after two, next bound 2.0 is above it.
  CHECK(proven_prefix(fitting, steps, 1, &decided) == 2);
  CHECK(decided);
  // Top 3: the 3rd best is 2.4, below the next bound 2.5: decided too.
  CHECK(proven_prefix(fitting, steps, 3, &decided) == 3);
  CHECK(decided);
  // Top 4 needs position 3, still unknown.
  CHECK(proven_prefix(fitting, steps, 4, &decided) == 3);
  CHECK(!decided);
  CHECK(worth_simulating(fitting, steps, 4, 3));
  CHECK(!worth_simulating(fitting, steps, 2, 3));
  // A failed simulation (inf) ranks nowhere: it does not fill the top.
  steps = {inf, 1.6, nan, nan, nan, nan};
  CHECK(proven_prefix(fitting, steps, 2, &decided) == 2);
  CHECK(!decided);
  // Everything simulated and none beats the bounds: the whole list.
  steps = {5, 5, 5, 5, 5, 5};
  CHECK(proven_prefix(fitting, steps, 1, &decided) == 6);
  CHECK(decided);
}
