// Fast against full fidelity (lowering/shortcuts.h) on seeded random plans: draws from the
// plan search's space (every searched dimension: t, cp, p, d, EP, ETP, dispatcher, micro-batch
// size, schedule, virtual stages, sequence parallelism, tp_comm_overlap, recompute, the
// sharding strategies, overlap_grad_reduce, overlap_param_gather, grad_reduce_in_bf16,
// placement) of small dense and MoE models on 8 GPUs in islands of 4 (A100) and 8 (H100). The
// step times must agree within 1 %; the test prints the draw count, the worst gap and how many
// draws took each shortcut (the shortcut record of each draw is in its failure message).
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "lowering/shortcuts.h"
#include "plan_support.h"
#include "search/plan_search.h"
#include "search/plan_space.h"
#include "sim_report.h"

using namespace trident;
using namespace trident::testing;

TEST_CASE("fast and full fidelity agree within 1 % on random plans",
          "[engine][fidelity][property]") {
  struct Case {
    std::string cluster, model;
    int nodes, gbs, seq, draws;
    std::vector<std::string> sets;  // shrinks the model so that full fidelity runs quickly
  };
  // tiny-2node: two islands of 4 A100, so that every group may span the network; dgx-h100:
  // one island of 8, where data-parallel groups share NVLink with the TP collectives.
  const std::vector<Case> cases = {
      {"tiny-2node", "llama3-8b", 2, 8, 4096, 120, {"model.num_layers=8"}},
      {"dgx-h100", "llama3-8b", 1, 8, 4096, 120, {"model.num_layers=8"}},
      {"tiny-2node", "qwen3-30b-a3b", 2, 8, 4096, 80, {"model.num_layers=4"}},
  };
  std::cout << std::flush;  // the simulations fork: nothing buffered to print twice
  std::mt19937 rng(20261203);
  int draws = 0;
  double worst = 0;
  std::string worst_label;
  std::map<std::string, int> taken;  // shortcut name -> draws that took it
  const auto start = std::chrono::steady_clock::now();
  for (const Case& k : cases) {
    const Scenario base = search_base(k.cluster, k.model, k.nodes, k.gbs, k.seq, k.sets);
    const SearchContext context = wide_context_of(base);
    const SpaceLimits limits = bf16_reduce_limits();
    EnumerationStats stats;
    std::vector<Candidate> space = enumerate_candidates(context, limits, &stats);
    // A seeded shuffle: the same draws every run.
    for (size_t i = space.size(); i > 1; --i) std::swap(space[i - 1], space[rng() % i]);
    int drawn = 0;
    for (const Candidate& c : space) {
      if (drawn == k.draws) break;
      if (!simulation_activity_issues(c.plan, base.model, base.cluster, Fidelity::kFull).empty()) {
        continue;
      }
      const Scenario sc = with_plan(base, c.plan);
      // The shortcut record: which shortcuts the fast step of this draw takes.
      std::string took;
      for (const auto& [name, s] : named_shortcuts(decide_shortcuts(sc, Fidelity::kFast))) {
        if (!s->taken) continue;
        taken[name] += 1;
        took += std::string(took.empty() ? "" : " ") + name;
      }
      const Report fast = simulate_report(sc, Fidelity::kFast);
      const Report full = simulate_report(sc, Fidelity::kFull);
      const double gap = std::abs(fast.step_time_s - full.step_time_s) / full.step_time_s;
      const std::string label = k.cluster + " " + k.model + ": " + candidate_label(c);
      if (gap > worst) {
        worst = gap;
        worst_label = label + " [" + took + "]";
      }
      ++drawn;
      ++draws;
      CAPTURE(label, took, fast.step_time_s, full.step_time_s);
      CHECK(gap <= 0.01);
    }
    CAPTURE(k.cluster, k.model, space.size());
    CHECK(drawn == k.draws);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "fidelity property: " << draws << " draws in " << seconds
            << " s, worst fast/full step gap " << 100 * worst << " % (" << worst_label
            << ")\nshortcuts taken:";
  for (const auto& [name, n] : taken) std::cout << " " << name << " " << n;
  std::cout << "\n";
  // The draws exercise every shortcut small plans can take.
  for (const char* name : {"group_actor", "fused_tp", "one_rank_flows", "mirrored_tp",
                           "one_replica", "collapsed_steps", "claimed_runs"}) {
    CAPTURE(name);
    CHECK(taken[name] > 0);
  }
}
