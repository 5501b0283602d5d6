// The step lower bound (src/search/plan_bound.h) on the overlap and sharding options of the
// wide plan space: never above the simulated step with tp_comm_overlap, overlap_param_gather,
// optim_grads or optim_grads_params.

#include <catch2/catch.hpp>
#include <string>

#include "engine/simulator.h"
#include "plan_support.h"
#include "search/plan_bound.h"
#include "search/plan_search.h"
#include "sim_report.h"

using namespace trident;
using namespace trident::testing;

TEST_CASE("plan search lower bound holds with TP overlap, parameter-gather overlap and sharding") {
  struct Case {
    std::string cluster, model;
    int nodes, gbs, seq;
  };
  // Islands of 4 (tiny-2node) and 8 (dgx-h100) GPUs, so that DP groups span nodes.
  const std::vector<Case> cases = {{"tiny-2node", "llama3-8b", 2, 32, 2048},
                                   {"dgx-h100", "llama3-8b", 2, 32, 4096}};
  for (const Case& k : cases) {
    const Scenario base = search_base(k.cluster, k.model, k.nodes, k.gbs, k.seq);
    SearchContext context = context_of(base);
    context.wide = true;
    const SpaceSummary space = bound_space(base, context, {});
    // One sample of each new option, several of the shardings.
    std::vector<const BoundedCandidate*> picked;
    int tpo = 0, opg = 0, zero2 = 0, zero3 = 0;
    for (size_t i = 0; i < space.fitting.size(); i += 7) {
      const PlanSpec& p = space.fitting[i].candidate.plan;
      bool take = false;
      if (p.tp_comm_overlap && tpo < 2) take = ++tpo;
      if (p.overlap_param_gather && !p.shards_params() && opg < 2) take = ++opg;
      if (p.dp_sharding == DpSharding::kOptimGrads && zero2 < 2) take = ++zero2;
      if (p.shards_params() && zero3 < 2) take = ++zero3;
      if (take) picked.push_back(&space.fitting[i]);
    }
    CHECK(tpo > 0);
    CHECK(opg > 0);
    CHECK(zero2 > 0);
    CHECK(zero3 > 0);
    for (const BoundedCandidate* c : picked) {
      CAPTURE(k.cluster, candidate_label(c->candidate));
      const Scenario sc = with_plan(base, c->candidate.plan);
      const double step = simulated_step(sc);
      CAPTURE(c->bound.total_s, step);
      CHECK(c->bound.total_s > 0);
      CHECK(c->bound.total_s <= step * (1 + 1e-9));
    }
  }
}
