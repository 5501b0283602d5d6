// Helpers for the plan-search tests: a scenario to search on, and its enumerated space.
#ifndef TRIDENT_TESTS_PLAN_SUPPORT_H_
#define TRIDENT_TESTS_PLAN_SUPPORT_H_

#include <string>
#include <vector>

#include "config/scenario.h"
#include "search/plan_space.h"

namespace trident::testing {

// A search base: `cluster` and `model` (library names) on `nodes` nodes, global batch `gbs`,
// then the `more` overrides (e.g. fewer layers).
inline Scenario search_base(const std::string& cluster, const std::string& model, int nodes,
                            int gbs, int seq, const std::vector<std::string>& more = {}) {
  const std::string text = "cluster: " + cluster + "\nmodel: " + model +
                           "\nplan:\n  tensor_parallel: 1\n  pipeline_parallel: 1\n"
                           "  data_parallel: 1\n  micro_batch_size: 1\n  global_batch_size: " +
                           std::to_string(gbs) + "\n";
  std::vector<std::string> sets = {"cluster.nodes=" + std::to_string(nodes),
                                   "model.seq_length=" + std::to_string(seq),
                                   "plan.num_microbatches=" + std::to_string(gbs)};
  sets.insert(sets.end(), more.begin(), more.end());
  return load_scenario_text(text, "plan-test", sets);
}

inline SearchContext context_of(const Scenario& base) {
  SearchContext c;
  c.model = &base.model;
  c.cluster = &base.cluster;
  c.gpus = base.cluster.total_gpus();
  c.base = base.plan;
  return c;
}

// The random plan tests' space: the wide search of `base` with gradients reduced in fp32 or bf16.
inline SearchContext wide_context_of(const Scenario& base) {
  SearchContext c = context_of(base);
  c.wide = true;
  return c;
}
inline SpaceLimits bf16_reduce_limits() {
  SpaceLimits limits;
  limits.values = {{"plan.grad_reduce_in_bf16", {"false", "true"}}};
  return limits;
}

// Every `stride`-th element of `all`, starting at `offset` (a deterministic sample).
template <typename T>
std::vector<T> every_nth(const std::vector<T>& all, size_t stride, size_t offset = 0) {
  std::vector<T> out;
  for (size_t i = offset; i < all.size(); i += stride) out.push_back(all[i]);
  return out;
}

}  // namespace trident::testing

#endif  // TRIDENT_TESTS_PLAN_SUPPORT_H_
