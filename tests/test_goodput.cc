// The whole-run model (src/goodput): the portable generator, the job's failure sources, the
// checkpoint's costs, Young's and Daly's intervals against the exact optimum, the Monte Carlo
// against the closed form, and the Llama 3 405B reproduction (docs/goodput.md).
#include <catch2/catch.hpp>
#include <cmath>

#include "config_support.h"
#include "goodput/goodput.h"
#include "goodput/prng.h"

using namespace trident;
using namespace trident::testing;

namespace {

const std::string kLlama405 = repo("scenarios/llama3-405b-16k-pretrain-h100.yaml");

RunModel sync_run() {
  RunModel run;
  run.work_s = 30 * 86400.0;
  run.save_block_s = 60;
  run.restart_s = 600;
  run.unplanned_rate = 1 / 7200.0;
  return run;
}

}  // namespace

TEST_CASE("splitmix64 and xoshiro256** draw the same on every platform", "[goodput]") {
  std::uint64_t state = 0;
  CHECK(splitmix64(&state) == 0xE220A8397B1DCDAFULL);  // the published first output of seed 0
  Prng a(42), b(42), c(43);
  bool differ = false;
  for (int i = 0; i < 100; ++i) {
    const std::uint64_t x = a.next();
    CHECK(x == b.next());
    differ |= x != c.next();
  }
  CHECK(differ);
  // Exponential draws have the mean asked for (1e5 draws: standard error 0.3 %).
  Prng p(7);
  double sum = 0;
  for (int i = 0; i < 100000; ++i) sum += p.exponential(3.0);
  CHECK(sum / 100000 == Approx(3.0).epsilon(0.01));
}

TEST_CASE("Young's and Daly's intervals are their closed forms", "[goodput]") {
  CHECK(young_interval(50, 10000) == Approx(1000).epsilon(1e-15));
  // x = delta / 2M = 0.0025: 1000 (1 + 0.05 / 3 + 0.0025 / 9) - 50.
  CHECK(daly_interval(50, 10000) == Approx(1000 * (1 + 0.05 / 3 + 0.0025 / 9) - 50).epsilon(1e-15));
  CHECK(daly_interval(300, 100) == 100);  // delta >= 2M: M
}

TEST_CASE("the exact optimum is Daly's interval within 0.1 %, Young's within 5 %", "[goodput]") {
  RunModel run = sync_run();
  const double m = 1 / run.unplanned_rate;
  const double opt = optimal_interval_s(run);
  CHECK(opt == Approx(daly_interval(run.save_block_s, m)).epsilon(1e-3));
  CHECK(opt == Approx(young_interval(run.save_block_s, m)).epsilon(0.05));
  // The restart cost multiplies the expectation by e^(R/M): the optimum does not move.
  run.restart_s = 3000;
  CHECK(optimal_interval_s(run) == Approx(opt).epsilon(1e-6));
  // Without failures one checkpoint at the end is best, and the time is the work plus it.
  run.unplanned_rate = 0;
  CHECK(optimal_interval_s(run) == run.work_s);
  CHECK(expected_time_s(run, 3600) == Approx(run.work_s + 720 * 60).epsilon(1e-12));
}

TEST_CASE("checkpoints come between steps: the optimum in whole steps", "[goodput]") {
  const RunModel run = sync_run();
  const double opt = optimal_interval_s(run);  // ~930 s
  const double step = 70;
  const double whole = optimal_whole_steps_s(run, step);
  CHECK(whole / step == std::round(whole / step));
  CHECK(std::abs(whole - opt) < step);
  for (double k : {whole / step - 1, whole / step + 1}) {
    CHECK(expected_time_s(run, whole) <= expected_time_s(run, k * step));
  }
  // A step longer than the optimum: a checkpoint after every step.
  CHECK(optimal_whole_steps_s(run, 5000) == 5000);
}

TEST_CASE("the Monte Carlo mean agrees with Daly's expectation", "[goodput]") {
  const RunModel run = sync_run();
  const double tau = optimal_interval_s(run);
  const MonteCarloSummary mc = monte_carlo(run, tau, 0, 400, 11);
  // 360 failures a run: the mean of 400 runs has a standard error near 0.1 %.
  CHECK(mc.mean.total() == Approx(expected_time_s(run, tau)).epsilon(0.005));
  CHECK(mc.mean.interruptions ==
        Approx(run.unplanned_rate * expected_time_s(run, tau)).epsilon(0.01));
  // Every run does all the work; the rest of its time is stalls, lost work and restarts.
  CHECK(mc.mean.productive_s == Approx(run.work_s).epsilon(1e-12));
  CHECK(quantile(mc.times_s, 0.1) < quantile(mc.times_s, 0.5));
  CHECK(quantile(mc.times_s, 0.5) < quantile(mc.times_s, 0.9));
  // At Young's interval too, and the closed form's expectation there is within 0.1 % of the
  // optimum's (the curve is flat where Young's lands).
  const double young = young_interval(run.save_block_s, 1 / run.unplanned_rate);
  CHECK(monte_carlo(run, young, 0, 400, 11).mean.total() ==
        Approx(expected_time_s(run, young)).epsilon(0.005));
  CHECK(expected_time_s(run, young) == Approx(expected_time_s(run, tau)).epsilon(1e-3));
}

TEST_CASE("the simulated optimum over an interval grid agrees with the closed form", "[goodput]") {
  const RunModel run = sync_run();
  const double opt = optimal_interval_s(run);
  double best_tau = 0, best = 1e300;
  for (int i = -8; i <= 8; ++i) {
    const double tau = opt * std::pow(2.0, i / 4.0);
    const double t = monte_carlo(run, tau, 0, 200, 5).mean.total();  // same draws at each
    if (t < best) best = t, best_tau = tau;
  }
  // The curve is flat near its minimum: the simulated optimum lies within a factor 1.5 of the
  // exact one and its time within 0.5 % of the closed form's minimum.
  CHECK(best_tau / opt == Approx(1).margin(0.5));
  CHECK(best == Approx(expected_time_s(run, opt)).epsilon(0.005));
}

TEST_CASE("asynchronous saves lose the write's lag and wait for the previous write", "[goodput]") {
  RunModel run = sync_run();
  run.save_block_s = 5;
  run.write_lag_s = 55;
  const double tau = 1000;
  const MonteCarloSummary mc = monte_carlo(run, tau, 0, 400, 3);
  CHECK(mc.mean.total() == Approx(expected_time_s(run, tau)).epsilon(0.01));
  // Cheaper than the same save written synchronously.
  RunModel sync = run;
  sync.save_block_s = 60, sync.write_lag_s = 0;
  CHECK(mc.mean.total() < monte_carlo(sync, tau, 0, 400, 3).mean.total());
  // No failures: a save every 30 s of work waits 25 s for the previous write besides its 5 s.
  run.unplanned_rate = 0;
  run.work_s = 3000;
  const RunBreakdown b = monte_carlo(run, 30, 0, 1, 1).mean;
  CHECK(b.checkpoint_s == Approx(100 * 5 + 99 * 25).epsilon(1e-12));
  CHECK(expected_time_s(run, 30) == Approx(3000 + 100 * 30.0).epsilon(1e-12));
}

TEST_CASE("planned stops cost their stop and lose no work", "[goodput]") {
  RunModel run;
  run.work_s = 100 * 86400.0;
  run.save_block_s = 10;
  run.planned_stop_s = 900;
  run.planned_rate = 1 / 86400.0;
  const MonteCarloSummary mc = monte_carlo(run, 3600, 0, 200, 9);
  CHECK(mc.mean.lost_s == 0);
  CHECK(mc.mean.total() == Approx(expected_time_s(run, 3600)).epsilon(0.005));
}

TEST_CASE("same seed, same draws; another seed, other draws", "[goodput]") {
  const RunModel run = sync_run();
  const MonteCarloSummary a = monte_carlo(run, 1000, 0, 20, 1);
  const MonteCarloSummary b = monte_carlo(run, 1000, 0, 20, 1);
  const MonteCarloSummary c = monte_carlo(run, 1000, 0, 20, 2);
  CHECK(a.times_s == b.times_s);
  CHECK(a.times_s != c.times_s);
}

TEST_CASE("a job's components are counted from the cluster's shape", "[goodput]") {
  const Scenario s = load_scenario(kLlama405, {});
  const std::vector<FailureSource> src = job_failure_sources(s.cluster, 16384);
  const auto count = [&](const std::string& name) {
    for (const FailureSource& f : src) {
      if (f.name == name) return f.count;
    }
    return -1.0;
  };
  CHECK(count("gpu") == 16384);
  CHECK(count("host") == 2048);
  CHECK(count("nic") == 16384);
  // 64 groups of 32 nodes, a leaf per rail (8) in each: 512 leaves and 256 spines.
  CHECK(count("switch") == 768);
  CHECK(count("link") == 32768);
  // Half the job: half of everything but the spines, which it still crosses.
  const std::vector<FailureSource> half = job_failure_sources(s.cluster, 8192);
  CHECK(half[0].count == 8192);
  CHECK(half[4].count == 256 + 128);
  // Inside one leaf group no spine is used.
  CHECK(job_failure_sources(s.cluster, 64)[4].count == 8);
  // A rail-optimized fabric has the same switches: its rail switches are the leaves.
  ClusterSpec rail = s.cluster;
  rail.network.topology = Topology::kRailOptimized;
  CHECK(job_failure_sources(rail, 16384)[4].count == 768);
  CHECK(job_failure_sources(rail, 16384)[5].count == 32768);
  // Four planes: a fabric per NIC port.
  rail.network.planes = 4;
  CHECK(job_failure_sources(rail, 16384)[4].count == 4 * 768);
  CHECK(job_failure_sources(rail, 16384)[5].count == 4 * 32768);
  // Three tiers, pods of 512 nodes: across pods, 512 spines (half their ports up) and 256
  // cores; cables to the core as many as the leaf uplinks.
  ClusterSpec three = s.cluster;
  three.network.tiers = 3;
  three.network.nodes_per_pod = 512;
  CHECK(job_failure_sources(three, 16384)[4].count == 512 + 512 + 256);
  CHECK(job_failure_sources(three, 16384)[5].count == 16384 * 3);
  // Inside one pod, the two-tier count.
  CHECK(job_failure_sources(three, 4096)[4].count == 128 + 64);
}

TEST_CASE("a checkpoint holds the 16-bit weights and the optimizer state once", "[goodput]") {
  const Scenario s = load_scenario(kLlama405, {});
  const Workload w = build_workload(s);
  const CheckpointCost sync = checkpoint_cost(s, w, CheckpointMode::kSync);
  // 2 bytes of weights and 12 of fp32 master weights and Adam moments per parameter.
  CHECK(sync.bytes_total == Approx(14 * w.total_params).epsilon(0.01));
  // 2048 nodes share the 2 TB/s file system: each writes at ~0.98 GB/s, below its 20 GB/s.
  const double node = 8 * sync.bytes_per_gpu;
  CHECK(sync.write_s == Approx(node / (2e12 / 2048)).epsilon(1e-12));
  CHECK(sync.save_block_s == sync.write_s);
  const CheckpointCost async = checkpoint_cost(s, w, CheckpointMode::kAsync);
  CHECK(async.save_block_s == Approx(async.bytes_per_gpu / 52e9).epsilon(1e-12));
  CHECK(async.write_lag_s == sync.write_s);
  // Restart: 2 + 3 + 2 min, 5 ms per GPU of NCCL set-up, and the load.
  CHECK(sync.restart_s == Approx(420 + 0.005 * 16384 + sync.load_s).epsilon(1e-12));
}

TEST_CASE("Llama 3 405B: 466 interruptions in 54 days and over 90 % effective training",
          "[goodput][llama3]") {
  const Scenario s = load_scenario(kLlama405, {});
  const Workload w = build_workload(s);
  GoodputOptions o;
  o.train_days = 54;
  o.samples = 100;
  // In days mode the interruptions and the effective fraction do not depend on the step.
  const GoodputResult g = evaluate_goodput(s, w, 20.0, 20.0, o);
  // Llama 3 (Dubey et al. 2024, Table 5): 466 interruptions, 47 planned and 419 unexpected.
  CHECK(g.mc.mean.interruptions == Approx(466).epsilon(0.15));
  CHECK(g.rates.unplanned * 54 * 86400 == Approx(419).epsilon(0.15));
  CHECK(g.rates.planned * 54 * 86400 == Approx(47).epsilon(0.15));
  CHECK(g.mc.mean.productive_s / g.mc.mean.total() > 0.90);
  CHECK(g.interval_s == g.optimal_s);
}
