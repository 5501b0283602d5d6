// Stragglers (cluster.stragglers, docs/stragglers.md): a slow GPU, a degraded NIC and
// background traffic change the simulated step exactly as the closed forms say, in both
// fidelities, and fast agrees with full on random plans with a straggler.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "config/stragglers.h"
#include "layout/rank_map.h"
#include "lowering/shortcuts.h"
#include "plan_support.h"
#include "search/plan_search.h"
#include "search/plan_space.h"
#include "sim_report.h"
#include "workload/nccl_model.h"
#include "workload/stage_work.h"
#include "workload/straggler_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

// A small data-parallel scenario on tiny-2node (two nodes of 4 A100): Llama 3 8B cut to two
// layers, no pipeline or tensor parallelism, the gradients all-reduced after the last backward
// (no overlap, no distributed optimizer), so that the step is compute, then the ring, then
// the optimizer.
Scenario dp_scenario(int data, int gpus_per_island, const std::vector<std::string>& more = {}) {
  std::vector<std::string> sets = {"model.num_layers=2",
                                   "plan.data_parallel=" + std::to_string(data),
                                   "plan.global_batch_size=" + std::to_string(2 * data),
                                   "plan.num_microbatches=2",
                                   "plan.overlap_grad_reduce=false",
                                   "plan.distributed_optimizer=false",
                                   "plan.gpus_per_island=" + std::to_string(gpus_per_island)};
  sets.insert(sets.end(), more.begin(), more.end());
  return search_base("tiny-2node", "llama3-8b", 2, 2, 1024, sets);
}

// The seconds of compute one GPU of stage `pp` runs in a step: every micro-batch's forward
// and backward passes, and the optimizer step.
double stage_compute(const Workload& w, const Scenario& sc, int pp) {
  const StageWork& st = w.stages[pp];
  double s = st.optimizer_s;
  for (const ChunkWork& ch : st.chunks) {
    s += sc.plan.num_microbatches * (ch.forward.compute_s + ch.backward.compute_s);
  }
  return s;
}

// The closed-form time of the data-parallel gradient all-reduce of stage 0 as the engine runs
// it: the plan NCCL's tuning picks on sc's cluster, on links as `cluster` has them (collapsed
// ring steps at fast fidelity, step by step at full).
double dp_ring_time(const Scenario& sc, const ClusterSpec& cluster, Fidelity f) {
  const Workload w = build_workload(sc);
  const RankMap ranks(sc.plan, sc.cluster);
  const CollectiveShape shape =
      collective_shape(ranks.data_group(0, 0), [&](int gpu) { return ranks.island_of(gpu); });
  const CollectivePlan plan =
      choose_collective_plan(CollectiveOp::kAllReduce, shape, w.stages[0].grad_bytes, sc.cluster);
  return collective_plan_time(plan, cluster, f == Fidelity::kFast);
}

}  // namespace

TEST_CASE("settings: stragglers default to none, helpers", "[stragglers]") {
  const Scenario healthy = dp_scenario(4, 0);
  CHECK_FALSE(has_stragglers(healthy.cluster));
  const Scenario slow = dp_scenario(
      4, 0, {"cluster.stragglers.gpu_clock_fraction=0.8", "cluster.stragglers.gpu_rank=2"});
  CHECK(has_stragglers(slow.cluster));
  CHECK(slow.cluster.stragglers.gpu_rank == 2);
  CHECK_FALSE(has_stragglers(without_stragglers(slow.cluster)));
  CHECK(slow_gpus(slow.cluster.stragglers, 4) == std::vector<int>{2});
  StragglerSpec three;
  three.gpu_clock_fraction = 0.9;
  three.gpu_rank = 1;
  three.gpu_count = 3;
  CHECK(slow_gpus(three, 64) == std::vector<int>{1, 22, 43});
  CHECK(slow_gpus(StragglerSpec(), 64).empty());
  // A rank the plan does not run on is refused with its key.
  CHECK_THROWS_WITH(
      dp_scenario(4, 0,
                  {"cluster.stragglers.gpu_clock_fraction=0.8", "cluster.stragglers.gpu_rank=6"}),
      Catch::Contains("gpu_rank") && Catch::Contains("not a GPU the plan runs on"));
  CHECK_THROWS_WITH(dp_scenario(4, 0, {"cluster.stragglers.gpu_clock_fraction=1.5"}),
                    Catch::Contains("gpu_clock_fraction"));
}

TEST_CASE("throttled work: every kernel time over the clock fraction", "[stragglers]") {
  const Scenario sc = dp_scenario(4, 0);
  const Workload w = build_workload(sc);
  const Workload slow = throttled_workload(w, 0.8);
  CHECK(stage_compute(slow, sc, 0) == Approx(stage_compute(w, sc, 0) / 0.8).epsilon(1e-12));
  CHECK(slow.stages[0].grad_bytes == w.stages[0].grad_bytes);
  CHECK(slow.stages[0].p2p_bytes == w.stages[0].p2p_bytes);
}

TEST_CASE("one GPU at 80 % clock in a data-parallel ring: its compute, then the ring",
          "[stragglers][engine]") {
  // d = 4 on one node (a ring over NVLink), and d = 2 one GPU per node (a ring over the NICs,
  // where fast fidelity simulates one replica for both: the slow one).
  struct Case {
    int data, per_island, slow_rank;
  };
  for (const Case& k : {Case{4, 0, 2}, Case{2, 1, 4}}) {
    const Scenario healthy = dp_scenario(k.data, k.per_island);
    const Scenario slow =
        dp_scenario(k.data, k.per_island,
                    {"cluster.stragglers.gpu_clock_fraction=0.8",
                     "cluster.stragglers.gpu_rank=" + std::to_string(k.slow_rank)});
    const double compute = stage_compute(build_workload(healthy), healthy, 0);
    for (Fidelity f : {Fidelity::kFast, Fidelity::kFull}) {
      CAPTURE(k.data, fidelity_name(f));
      const double ring = dp_ring_time(healthy, healthy.cluster, f);
      const double before = simulate_report(healthy, f).step_time_s;
      const double after = simulate_report(slow, f).step_time_s;
      // SimGrid keeps time in nanoseconds: 1e-7 of a step is ~10 of them.
      CHECK(before == Approx(compute + ring).epsilon(1e-7));
      CHECK(after == Approx(compute / 0.8 + ring).epsilon(1e-7));
    }
  }
  // Fast fidelity keeps one_replica for d = 2 over the NICs, standing for the slow replica.
  const Scenario slow = dp_scenario(
      2, 1, {"cluster.stragglers.gpu_clock_fraction=0.8", "cluster.stragglers.gpu_rank=4"});
  const Shortcuts s = decide_shortcuts(slow, Fidelity::kFast);
  CHECK(s.one_replica.taken);
  CHECK_THAT(s.one_replica.reason, Catch::Contains("slow GPUs (data rank 1)"));
}

TEST_CASE("a degraded NIC and background traffic set the ring's bandwidth term",
          "[stragglers][engine]") {
  // Two members, one GPU per node: each ring edge crosses both nodes' NICs.
  const Scenario healthy = dp_scenario(2, 1);
  const double compute = stage_compute(build_workload(healthy), healthy, 0);
  ClusterSpec fast_network = healthy.cluster;
  fast_network.network.nic_bandwidth *= 1e6;  // leaves the latency terms alone
  for (Fidelity f : {Fidelity::kFast, Fidelity::kFull}) {
    CAPTURE(fidelity_name(f));
    const double latency_terms = dp_ring_time(healthy, fast_network, f);
    const double ring = dp_ring_time(healthy, healthy.cluster, f);
    const double bandwidth_term = ring - latency_terms;
    REQUIRE(bandwidth_term > 0);
    // The NIC of GPU 4 at half its bandwidth: the ring runs at its slowest link.
    const Scenario nic =
        dp_scenario(2, 1, {"cluster.stragglers.nic_fraction=0.5", "cluster.stragglers.nic_rank=4"});
    CHECK(simulate_report(nic, f).step_time_s ==
          Approx(compute + latency_terms + bandwidth_term / 0.5).epsilon(1e-6));
    // A quarter of every fabric link taken by other jobs: the bandwidth term over 1 - 0.25.
    const Scenario busy = dp_scenario(2, 1, {"cluster.stragglers.background_traffic=0.25"});
    CHECK(simulate_report(busy, f).step_time_s ==
          Approx(compute + latency_terms + bandwidth_term / 0.75).epsilon(1e-6));
  }
}

TEST_CASE("a slow last stage stretches the 1F1B step by its micro-batches' extra time",
          "[stragglers][engine]") {
  // p = 4 on one node, d = t = 1, 8 micro-batches. The last stage (output layer and loss) is
  // the heaviest, so it paces the steady state; at 80 % clock every one of its m forwards and
  // backwards stays on the critical path (its input is always ready: the stage before it runs
  // faster), and the step grows by m (F + B) (1 / 0.8 - 1), the pipeline transfers unchanged.
  const std::vector<std::string> sets = {"model.num_layers=4", "plan.pipeline_parallel=4",
                                         "plan.global_batch_size=8", "plan.num_microbatches=8",
                                         "plan.schedule=1f1b"};
  const Scenario healthy = search_base("tiny-2node", "llama3-8b", 2, 8, 1024, sets);
  std::vector<std::string> slow_sets = sets;
  slow_sets.push_back("cluster.stragglers.gpu_clock_fraction=0.8");
  slow_sets.push_back("cluster.stragglers.gpu_rank=3");  // stage 3 (rank r runs on GPU r)
  const Scenario slow = search_base("tiny-2node", "llama3-8b", 2, 8, 1024, slow_sets);
  const Workload w = build_workload(healthy);
  const ChunkWork& last = w.stages[3].chunks[0];
  const double m = healthy.plan.num_microbatches;
  const double passes = m * (last.forward.compute_s + last.backward.compute_s);
  for (int k = 0; k < 3; ++k) {
    const ChunkWork& ch = w.stages[k].chunks[0];
    REQUIRE(ch.forward.compute_s + ch.backward.compute_s <
            last.forward.compute_s + last.backward.compute_s);
  }
  for (Fidelity f : {Fidelity::kFast, Fidelity::kFull}) {
    CAPTURE(fidelity_name(f));
    const double before = simulate_report(healthy, f).step_time_s;
    const double after = simulate_report(slow, f).step_time_s;
    CHECK(after - before == Approx(passes * (1 / 0.8 - 1)).epsilon(1e-6));
  }
}

TEST_CASE("fast and full fidelity agree within 1 % on random plans with a straggler",
          "[stragglers][engine][fidelity][property]") {
  // The random plan tests' space (test_fidelity_property.cc) on tiny-2node, each draw with one
  // kind of straggler on a random rank of its plan.
  const Scenario base = search_base("tiny-2node", "llama3-8b", 2, 8, 4096, {"model.num_layers=8"});
  EnumerationStats stats;
  std::vector<Candidate> space =
      enumerate_candidates(wide_context_of(base), bf16_reduce_limits(), &stats);
  std::cout << std::flush;  // the simulations fork: nothing buffered to print twice
  std::mt19937 rng(20261204);
  for (size_t i = space.size(); i > 1; --i) std::swap(space[i - 1], space[rng() % i]);
  int drawn = 0;
  double worst = 0;
  for (const Candidate& c : space) {
    if (drawn == 16) break;
    if (!simulation_activity_issues(c.plan, base.model, base.cluster, Fidelity::kFull).empty()) {
      continue;
    }
    Scenario sc = with_plan(base, c.plan);
    StragglerSpec& st = sc.cluster.stragglers;
    // A random GPU of the plan (plan.gpus_per_island may leave GPUs out).
    const RankMap ranks(sc.plan, sc.cluster);
    const auto random_gpu = [&]() {
      const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
      return ranks.gpu(pick(c.plan.tensor), pick(c.plan.context), pick(c.plan.data),
                       pick(c.plan.pipeline));
    };
    const int rank = random_gpu();
    switch (drawn % 4) {
      case 0:
      case 1:
        st.gpu_clock_fraction = 0.8;
        st.gpu_rank = rank;
        st.gpu_count = drawn % 4 == 1 ? 2 : 1;
        break;
      case 2:
        st.nic_fraction = 0.5;
        st.nic_rank = rank;
        st.nvlink_fraction = 0.7;
        st.nvlink_rank = random_gpu();
        break;
      default:
        st.background_traffic = 0.3;
        st.gpu_clock_fraction = 0.9;
        st.gpu_rank = rank;
        break;
    }
    ++drawn;
    const double fast = simulate_report(sc, Fidelity::kFast).step_time_s;
    const double full = simulate_report(sc, Fidelity::kFull).step_time_s;
    const double gap = std::abs(fast - full) / full;
    worst = std::max(worst, gap);
    CAPTURE(candidate_label(c), drawn, rank, fast, full);
    CHECK(gap <= 0.01);
  }
  CHECK(drawn == 16);
  std::cout << "stragglers: " << drawn << " draws, worst fast/full step gap " << 100 * worst
            << " %\n";
}
