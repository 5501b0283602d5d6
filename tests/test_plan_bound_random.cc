// The step lower bound of `trident plan` (src/search/plan_bound.h) against the engine on
// random plans that draw every searched dimension: each value every field of the table takes
// in a space (tensor, context, pipeline, expert and expert-tensor parallel, micro-batch,
// schedule, virtual stages, sequence parallelism, tp_comm_overlap, recompute, the sharding
// strategies, overlap_grad_reduce, overlap_param_gather, grad_reduce_in_bf16, placement) and
// the uneven layer splits appear in at least one simulated draw.

#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <set>
#include <string>

#include "engine/simulator.h"
#include "plan_support.h"
#include "search/plan_bound.h"
#include "search/plan_search.h"
#include "sim_report.h"

using namespace trident;
using namespace trident::testing;

namespace {

// (field, value) pairs of a candidate: every searched field, and whether its layers are split
// unevenly (a derived field).
std::vector<std::string> features(const Candidate& c) {
  const std::vector<SearchDimension>& dims = search_dimensions();
  std::vector<std::string> out;
  for (size_t i = 0; i < dims.size(); ++i) out.push_back(dims[i].key + "=" + c.values[i]);
  out.push_back(c.plan.pipeline_layers.empty() ? "even" : "uneven");
  return out;
}

// A random draw of `fitting` (seeded: the same draw every run) in which every feature of the
// space occurs: candidates are taken in a random order while they add an unseen feature.
std::vector<const BoundedCandidate*> draw_covering(const std::vector<BoundedCandidate>& fitting,
                                                   unsigned seed, std::set<std::string>* seen) {
  std::mt19937 rng(seed);
  std::vector<size_t> order(fitting.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  std::vector<const BoundedCandidate*> out;
  for (size_t i : order) {
    bool adds = false;
    for (const std::string& f : features(fitting[i].candidate)) adds |= seen->insert(f).second;
    if (adds) out.push_back(&fitting[i]);
  }
  return out;
}

}  // namespace

TEST_CASE("plan search lower bound is never above the simulated step on random plans") {
  struct Case {
    std::string cluster, model;
    int nodes, gbs, seq;
    std::vector<std::string> sets;  // shrinks the model so that the draw simulates quickly
    std::vector<std::string> must;  // features the space must offer (and the draw then has)
  };
  // tiny-2node: two islands of 4 GPUs, so that TP, CP, DP and EP groups may span nodes.
  // 30 layers split unevenly over 4 and 8 stages; seq 8192 allows cp = 2 (with experts too).
  const std::vector<Case> cases = {
      {"tiny-2node",
       "llama3-8b",
       2,
       16,
       8192,
       {"model.num_layers=30"},
       {"plan.context_parallel=2", "uneven", "plan.schedule=interleaved-1f1b",
        "plan.tp_comm_overlap=true", "plan.overlap_param_gather=true",
        "plan.data_parallel_sharding_strategy=optim_grads",
        "plan.data_parallel_sharding_strategy=optim_grads_params", "plan.grad_reduce_in_bf16=true",
        "plan.placement=[tensor, context, pipeline, data]"}},
      {"tiny-2node",
       "qwen3-30b-a3b",
       2,
       16,
       8192,
       {"model.num_layers=6"},
       {"plan.context_parallel=2", "plan.expert_model_parallel_size=8",
        "plan.expert_tensor_parallel_size=1", "plan.expert_tensor_parallel_size=4",
        "plan.recompute=selective"}},
  };
  for (const Case& k : cases) {
    const Scenario base = search_base(k.cluster, k.model, k.nodes, k.gbs, k.seq, k.sets);
    const SearchContext context = wide_context_of(base);
    const SpaceLimits limits = bf16_reduce_limits();
    const SpaceSummary space = bound_space(base, context, limits);
    std::set<std::string> seen;
    const std::vector<const BoundedCandidate*> draw = draw_covering(space.fitting, 20261201, &seen);
    for (const std::string& f : k.must) {
      CAPTURE(k.model, f);
      CHECK(seen.count(f) == 1);
    }
    for (const BoundedCandidate* c : draw) {
      CAPTURE(k.model, candidate_label(c->candidate));
      const double step = simulated_step(with_plan(base, c->candidate.plan));
      CAPTURE(c->bound.total_s, step);
      CHECK(c->bound.total_s > 0);
      CHECK(c->bound.total_s <= step * (1 + 1e-9));
    }
  }
}
