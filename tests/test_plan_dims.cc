// The overlap and sharding fields of the plan space (src/search/plan_dimensions.cc):
// tp_comm_overlap, overlap_param_gather and data_parallel_sharding_strategy follow Megatron's
// rules, load as `simulate --set` loads them, and are searched in full only with `wide`.
#include <catch2/catch.hpp>
#include <set>

#include "config/checks.h"
#include "plan_support.h"
#include "search/plan_space.h"

using namespace trident;
using namespace trident::testing;

namespace {

struct Seen {
  std::set<DpSharding> sharding;
  bool tpo = false, opg = false;
};

Seen seen_in(const std::vector<Candidate>& all) {
  Seen s;
  for (const Candidate& c : all) {
    s.sharding.insert(c.plan.dp_sharding);
    s.tpo = s.tpo || c.plan.tp_comm_overlap;
    s.opg = s.opg || c.plan.overlap_param_gather;
  }
  return s;
}

}  // namespace

TEST_CASE("wide plan space candidates meet Megatron's overlap and sharding rules and load") {
  const Scenario base = search_base("tiny-2node", "llama3-8b", 2, 32, 2048);
  SearchContext context = context_of(base);
  context.wide = true;
  EnumerationStats stats;
  const std::vector<Candidate> all = enumerate_candidates(context, {}, &stats);
  for (const auto& [rule, n] : stats.pruned) CHECK(rule.rfind("checks:", 0) != 0);
  const Seen seen = seen_in(all);
  CHECK(seen.sharding.size() == 4);
  CHECK(seen.tpo);
  CHECK(seen.opg);
  for (const Candidate& c : all) {
    const PlanSpec& p = c.plan;
    // megatron/training/arguments.py: overlap_param_gather asserts the distributed optimizer
    // and overlap_grad_reduce; optim_grads sets overlap_grad_reduce, optim_grads_params both.
    CHECK(p.distributed_optimizer == (p.dp_sharding != DpSharding::kNoShard));
    if (p.tp_comm_overlap) CHECK((p.sequence_parallel && p.tensor > 1));
    if (p.overlap_param_gather) CHECK((p.distributed_optimizer && p.overlap_grad_reduce));
    if (p.shards_gradients()) CHECK(p.overlap_grad_reduce);
    if (p.shards_params()) CHECK(p.overlap_param_gather);
    if (p.dp_sharding != DpSharding::kNoShard) CHECK(p.data_context() > 1);
  }
  // Sampled candidates load through their --set line with the same fields, even on a base
  // whose file says distributed_optimizer: true (the overrides name it).
  for (const Candidate& c : every_nth(all, all.size() / 30 + 1, 5)) {
    CAPTURE(candidate_label(c));
    std::vector<std::string> sets = {"cluster.nodes=2", "model.seq_length=2048",
                                     "plan.global_batch_size=32"};
    for (const std::string& o : candidate_overrides(c)) sets.push_back(o);
    const Scenario sc = load_scenario_text(
        "cluster: tiny-2node\nmodel: llama3-8b\nplan:\n  distributed_optimizer: true\n",
        "plan-test", sets);
    CHECK_NOTHROW(validate_scenario(sc));
    CHECK(sc.plan.dp_sharding == c.plan.dp_sharding);
    CHECK(sc.plan.tp_comm_overlap == c.plan.tp_comm_overlap);
    CHECK(sc.plan.overlap_param_gather == c.plan.overlap_param_gather);
    CHECK(sc.plan.overlap_grad_reduce == c.plan.overlap_grad_reduce);
  }
}

TEST_CASE("plan space without wide keeps the base's overlap options and ZeRO-1 at most") {
  const Scenario base = search_base("tiny-2node", "llama3-8b", 2, 32, 2048);
  EnumerationStats stats;
  const Seen narrow = seen_in(enumerate_candidates(context_of(base), {}, &stats));
  CHECK(narrow.sharding == std::set<DpSharding>{DpSharding::kNoShard, DpSharding::kOptim});
  CHECK_FALSE(narrow.tpo);
  CHECK_FALSE(narrow.opg);
  // --vary opens a field; plan.distributed_optimizer names no_shard and optim.
  SpaceLimits limits;
  limits.values = {{"plan.data_parallel_sharding_strategy", {"optim_grads"}}};
  const std::vector<Candidate> zero2 = enumerate_candidates(context_of(base), limits, &stats);
  REQUIRE_FALSE(zero2.empty());
  for (const Candidate& c : zero2) CHECK(c.plan.dp_sharding == DpSharding::kOptimGrads);
  limits.values = {{"plan.distributed_optimizer", {"true"}}};
  for (const Candidate& c : enumerate_candidates(context_of(base), limits, &stats)) {
    CHECK(c.plan.dp_sharding == DpSharding::kOptim);
  }
  // A base that overlaps keeps overlapping where the rules allow it.
  SearchContext overlapping = context_of(base);
  overlapping.base.tp_comm_overlap = true;
  overlapping.base.overlap_param_gather = true;
  for (const Candidate& c : enumerate_candidates(overlapping, {}, &stats)) {
    CHECK(c.plan.tp_comm_overlap == (c.plan.tensor > 1 && c.plan.sequence_parallel));
    CHECK(c.plan.overlap_param_gather ==
          (c.plan.distributed_optimizer && c.plan.overlap_grad_reduce));
  }
}
