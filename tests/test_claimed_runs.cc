// Claimed runs (engine/claimed_runs, phase_runner's run_claimed and run_phases_from): a run of
// flows alone on its links takes its closed form, and one interrupted by a flow that reaches
// its links goes on as flows, both ending when plain SimGrid flows end; the slow GPT-3
// families this shortcut is for agree with full fidelity. Every simulation runs in a child
// process.
#include <catch2/catch.hpp>
#include <sstream>

#include "core/isolated_run.h"
#include "engine/probes.h"
#include "lowering/shortcuts.h"
#include "sim_report.h"
#include "test_support.h"

using namespace trident;
using namespace trident::testing;

namespace {

ClaimProbe claim_probe(const ClusterSpec& c, const std::vector<Phase>& first,
                       const std::vector<Phase>& second, double delay, bool claimed,
                       bool second_claimed = false, const std::vector<Phase>& third = {},
                       double third_delay = 0, bool third_claimed = false) {
  const std::string text = run_isolated([&]() {
    const ClaimProbe p = probe_claim(c, 24, first, second, delay, claimed, second_claimed, third,
                                     third_delay, third_claimed);
    std::ostringstream out;
    out.precision(17);
    out << p.first_end << " " << p.second_end << " " << p.third_end << " " << p.alone_s << " "
        << p.interruptions << " " << p.shared;
    return out.str();
  });
  std::istringstream in(text);
  ClaimProbe p;
  in >> p.first_end >> p.second_end >> p.third_end >> p.alone_s >> p.interruptions >> p.shared;
  return p;
}

std::vector<Phase> one_flow(int src, int dst, double bytes) {
  std::vector<Phase> phases(1);
  phases[0].flows.push_back({src, dst, bytes});
  return phases;
}

}  // namespace

TEST_CASE("claimed runs: alone, a claim takes exactly what its flows take", "[claims]") {
  const ClusterSpec c = a100_cluster(3);
  LoweringOptions opt;
  opt.cluster = &c;
  const auto island_of = [](int gpu) { return gpu / 8; };
  std::vector<int> sixteen;
  for (int g = 0; g < 16; ++g) sixteen.push_back(g);
  struct Case {
    const char* name;
    std::vector<Phase> phases;
  };
  const Case cases[] = {
      {"one flow between nodes", one_flow(0, 8, 1e9)},
      {"one flow over NVLink", one_flow(0, 3, 1e9)},
      {"a flow out through its NIC and back", one_flow(5, 5, 3e8)},
      {"all-gather over two nodes",
       lower_collective(CollectiveOp::kAllGather, {sixteen}, 5e7, island_of, opt)},
      {"reduce-scatter in a node",
       lower_collective(CollectiveOp::kReduceScatter, {{0, 1, 2, 3, 4, 5, 6, 7}}, 5e7, island_of,
                        opt)},
  };
  for (const Case& k : cases) {
    INFO(k.name);
    const ClaimProbe plain = claim_probe(c, k.phases, {}, 0, false);
    const ClaimProbe claimed = claim_probe(c, k.phases, {}, 0, true);
    REQUIRE(plain.alone_s > 0);
    CHECK(plain.first_end == Approx(plain.alone_s).epsilon(1e-9));
    CHECK(claimed.first_end == Approx(plain.first_end).epsilon(1e-9));
    CHECK(claimed.interruptions == 0);
  }
  // Flows of one phase that share a link have no alone schedule: they run as flows.
  std::vector<Phase> shared = one_flow(0, 8, 1e9);
  shared[0].flows.push_back({0, 16, 1e9});
  const ClaimProbe plain = claim_probe(c, shared, {}, 0, false);
  const ClaimProbe claimed = claim_probe(c, shared, {}, 0, true);
  CHECK(plain.alone_s == -1);
  CHECK(claimed.first_end == plain.first_end);
}

TEST_CASE("claimed runs: an interrupted claim ends when its flows would have", "[claims]") {
  const ClusterSpec c = a100_cluster(3);
  // 1 GB from GPU 0 to node 1 (40 ms at 25 GB/s); 0.5 GB from GPU 0 to node 2 shares its NIC.
  const std::vector<Phase> first = one_flow(0, 8, 1e9);
  const std::vector<Phase> shares = one_flow(0, 16, 5e8);
  const std::vector<Phase> apart = one_flow(1, 9, 5e8);
  struct Case {
    const char* name;
    const std::vector<Phase>* second;
    double delay;
    long interruptions;  // -1: either (which actor starts first at one instant)
  };
  const Case cases[] = {
      {"at the same instant", &shares, 0, -1},
      {"during the first flow's latency", &shares, 2e-6, 1},
      {"during its bytes", &shares, 0.013, 1},
      {"a moment before it ends", &shares, 0.039, 1},
      {"after it ended", &shares, 0.05, 0},
      {"on links of its own", &apart, 0.01, 0},
  };
  for (const Case& k : cases) {
    INFO(k.name);
    const ClaimProbe plain = claim_probe(c, first, *k.second, k.delay, false);
    const ClaimProbe claimed = claim_probe(c, first, *k.second, k.delay, true);
    CHECK(claimed.first_end == Approx(plain.first_end).epsilon(1e-9));
    CHECK(claimed.second_end == Approx(plain.second_end).epsilon(1e-9));
    if (k.interruptions >= 0) CHECK(claimed.interruptions == k.interruptions);
  }
  // The sharing is real: a shared NIC slows both flows down.
  const ClaimProbe alone = claim_probe(c, first, apart, 0, false);
  const ClaimProbe shared = claim_probe(c, first, shares, 0, false);
  CHECK(shared.first_end > 1.2 * alone.first_end);
}

TEST_CASE("claimed runs: fast fidelity takes them, and agrees with full on the GPT-3 families",
          "[claims][fidelity]") {
  CHECK(decide_shortcuts(scenario(a100_cluster(2), gpt_model(4, 1024, 16, 512, 32000),
                                  plan(8, 2, 1, 1, 4, ScheduleKind::k1F1B)),
                         Fidelity::kFast)
            .claimed_runs.taken);
  struct Case {
    const char* name;
    int t, p, d;
    bool neighbours_in_node;
    bool sequence_parallel;
  };
  // Interleaved steps whose TP collectives meet pipeline transfers: t = 16 across two nodes
  // (mirrored TP through the NICs the transfers use), with sequence parallelism and without
  // (all-reduces beside weight-gradient GEMMs timed together with transfers), and pipeline
  // neighbours in one node (NVLink shared with the TP rings).
  const Case cases[] = {
      {"t = 16 over two nodes", 16, 2, 2, false, true},
      {"pipeline neighbours in one node", 4, 4, 2, true, true},
      {"t = 16 over two nodes, no sequence parallelism", 16, 2, 2, false, false},
  };
  for (const Case& k : cases) {
    INFO(k.name);
    Scenario sc = scenario(a100_cluster(4), gpt_model(8, 2048, 16, 1024, 32000),
                           plan(k.t, k.p, k.d, 1, 8, ScheduleKind::kInterleaved1F1B));
    sc.plan.virtual_stages = 2;
    sc.plan.sequence_parallel = k.sequence_parallel;
    sc.plan.distributed_optimizer = true;
    sc.plan.overlap_grad_reduce = true;
    sc.plan.grad_bucket_size = 20000000;
    if (k.neighbours_in_node) {
      sc.plan.placement = {ParallelDim::kTensor, ParallelDim::kPipeline, ParallelDim::kData};
    }
    const Report fast = simulate_report(sc, Fidelity::kFast);
    const Report full = simulate_report(sc, Fidelity::kFull);
    CHECK(fast.step_time_s == Approx(full.step_time_s).epsilon(0.01));
    CHECK(fast.tp_comm_exposed_s == Approx(full.tp_comm_exposed_s).epsilon(0.01));
    // A fraction of a millisecond: within 1 % or 10 us (the host's launch waits move which
    // transfer of the two fidelities' schedules the critical path meets).
    CHECK(fast.pp_comm_exposed_s == Approx(full.pp_comm_exposed_s).epsilon(0.01).margin(1e-5));
    CHECK(fast.dp_comm_exposed_s == Approx(full.dp_comm_exposed_s).epsilon(0.01).margin(1e-5));
  }
}

TEST_CASE("claimed runs: two claims sharing one link end when their flows would", "[claims]") {
  const ClusterSpec c = a100_cluster(3);
  // Both leave GPU 0 through its NIC: max-min splits it while both move bytes. Two flows of
  // one group (0 -> 8 and 1 -> 9) are never slowed in closed form: the second claim then runs
  // as flows.
  std::vector<Phase> two = one_flow(0, 8, 2e8);
  two[0].flows.push_back({1, 9, 2e8});
  struct Case {
    const char* name;
    std::vector<Phase> first, second;
    bool shared;
  };
  const Case cases[] = {
      {"a transfer and a longer one", one_flow(0, 8, 1e9), one_flow(0, 16, 3e8), true},
      {"a transfer then two hops", one_flow(0, 16, 2e8),
       [] {
         std::vector<Phase> p = one_flow(0, 8, 2e8);
         p.push_back(one_flow(8, 17, 2e8).front());
         return p;
       }(),
       true},
      {"a group of two flows", two, one_flow(0, 16, 3e8), false},
  };
  for (const Case& k : cases) {
    for (double delay : {0.0, 0.002, 0.006, 0.02}) {
      INFO(k.name << ", second from " << delay << " s");
      const ClaimProbe plain = claim_probe(c, k.first, k.second, delay, false, false);
      const ClaimProbe claimed = claim_probe(c, k.first, k.second, delay, true, true);
      CHECK(claimed.first_end == Approx(plain.first_end).epsilon(1e-9));
      CHECK(claimed.second_end == Approx(plain.second_end).epsilon(1e-9));
      // Timed together when they meet (the second starts before the first ends).
      if (k.shared && delay < plain.first_end) CHECK(claimed.shared >= 1);
      if (k.shared) CHECK(claimed.interruptions == 0);
    }
  }
}

TEST_CASE("claimed runs: a flow on a link the claim needs later only stops it if still there",
          "[claims]") {
  const ClusterSpec c = a100_cluster(3);
  // Two hops in sequence: GPU 2 -> node 1 (20 ms at 25 GB/s), then GPU 0 -> node 2 through
  // GPU 0's NIC, which the plain flow 0 -> 8 also leaves by.
  std::vector<Phase> hops = one_flow(2, 10, 5e8);
  hops.push_back(one_flow(0, 16, 5e8).front());
  struct Case {
    const char* name;
    bool plain_first;  // the plain flow starts first (in flight when the run claims), or later
    double bytes;      // of the plain flow: 8 ms or 40 ms
    long interruptions;
  };
  const Case cases[] = {
      {"in flight at the claim, gone when its hop starts", true, 2e8, 0},
      {"in flight at the claim and when its hop starts", true, 1e9, 1},
      {"starting during the first hop, gone before the second", false, 1e8, 0},
      {"starting during the first hop, still there at the second", false, 1e9, 1},
  };
  for (const Case& k : cases) {
    INFO(k.name);
    const std::vector<Phase> plain_flow = one_flow(0, 8, k.bytes);
    const std::vector<Phase>& first = k.plain_first ? plain_flow : hops;
    const std::vector<Phase>& second = k.plain_first ? hops : plain_flow;
    const double delay = k.plain_first ? 0.001 : 0.005;
    const ClaimProbe plain = claim_probe(c, first, second, delay, false, false);
    const ClaimProbe claimed = claim_probe(c, first, second, delay, !k.plain_first, k.plain_first);
    CHECK(claimed.first_end == Approx(plain.first_end).epsilon(1e-9));
    CHECK(claimed.second_end == Approx(plain.second_end).epsilon(1e-9));
    CHECK(claimed.interruptions == k.interruptions);
  }
}

TEST_CASE("claimed runs: claims timed together and stopped by a third flow end as flows would",
          "[claims]") {
  const ClusterSpec c = a100_cluster(3);
  // Two claims share GPU 0's NIC (0 -> 8 and 0 -> 16), then a plain flow 0 -> 9 starts on it
  // while they share: both go on as flows, which pay their latency again while moving at half
  // the NIC before the third joins.
  const std::vector<Phase> first = one_flow(0, 8, 1e9), second = one_flow(0, 16, 3e8);
  const std::vector<Phase> third = one_flow(0, 9, 2e8);
  for (double at : {0.004, 0.01, 0.02}) {
    INFO("third from " << at << " s");
    const ClaimProbe plain = claim_probe(c, first, second, 0.001, false, false, third, at);
    const ClaimProbe claimed = claim_probe(c, first, second, 0.001, true, true, third, at);
    CHECK(claimed.shared >= 1);
    CHECK(claimed.interruptions == 2);
    CHECK(claimed.first_end == Approx(plain.first_end).epsilon(1e-9));
    CHECK(claimed.second_end == Approx(plain.second_end).epsilon(1e-9));
    CHECK(claimed.third_end == Approx(plain.third_end).epsilon(1e-9));
  }
}

TEST_CASE("claimed runs: three claims meeting on one link end when their flows would", "[claims]") {
  const ClusterSpec c = a100_cluster(3);
  // All three leave GPU 0 through its NIC; the third joins while the first two share it, and
  // the three then split it max-min, a third each, until one arrives. The third then leaves
  // by two hops (GPU 0 -> node 1, node 1 -> node 2), its second hop on other links.
  const std::vector<Phase> first = one_flow(0, 8, 1e9), second = one_flow(0, 16, 3e8);
  std::vector<Phase> hops = one_flow(0, 9, 2e8);
  hops.push_back(one_flow(9, 18, 1e8).front());
  for (double at : {0.0005, 0.004, 0.01, 0.03}) {
    INFO("third from " << at << " s");
    const ClaimProbe plain = claim_probe(c, first, second, 0.001, false, false, hops, at, false);
    const ClaimProbe claimed = claim_probe(c, first, second, 0.001, true, true, hops, at, true);
    CHECK(claimed.interruptions == 0);
    CHECK(claimed.shared >= 2);
    CHECK(claimed.first_end == Approx(plain.first_end).epsilon(1e-9));
    CHECK(claimed.second_end == Approx(plain.second_end).epsilon(1e-9));
    CHECK(claimed.third_end == Approx(plain.third_end).epsilon(1e-9));
  }
}

TEST_CASE("claimed runs: random meetings of three claimed runs end as flows would", "[claims]") {
  // Runs of one to three hops (some with closed-form floors, some followed by a floor alone)
  // from GPUs 0-3, which meet on those GPUs' NICs two or three at a time: timed together in
  // closed form, refused, or interrupted, each run ends when plain flows do.
  const ClusterSpec c = a100_cluster(3);
  unsigned seed = 12345;
  const auto rnd = [&seed](int n) {
    seed = seed * 1103515245u + 12345u;
    return static_cast<int>((seed >> 16) % n);
  };
  long shared = 0;
  for (int trial = 0; trial < 60; ++trial) {
    std::vector<std::vector<Phase>> runs(3);
    for (std::vector<Phase>& r : runs) {
      int src = rnd(4);
      for (int hops = 1 + rnd(3); hops > 0; --hops) {
        int dst = rnd(24);
        if (dst / 8 == src / 8) dst = (dst + 8) % 24;
        r.push_back(one_flow(src, dst, 1e7 * (1 + rnd(30))).front());
        if (rnd(2)) r.back().floor_s = 1e-4 * (1 + rnd(20));
        if (rnd(3) == 0) {
          Phase floor_only;
          floor_only.floor_s = 1e-4 * (1 + rnd(10));
          r.push_back(floor_only);
        }
        src = rnd(2) ? dst : rnd(4);
      }
    }
    const double second = 1e-4 * rnd(100), third = 1e-4 * rnd(100);
    INFO("trial " << trial);
    const ClaimProbe plain =
        claim_probe(c, runs[0], runs[1], second, false, false, runs[2], third, false);
    const ClaimProbe claimed =
        claim_probe(c, runs[0], runs[1], second, true, true, runs[2], third, true);
    CHECK(claimed.first_end == Approx(plain.first_end).epsilon(1e-9));
    CHECK(claimed.second_end == Approx(plain.second_end).epsilon(1e-9));
    CHECK(claimed.third_end == Approx(plain.third_end).epsilon(1e-9));
    shared += claimed.shared;
  }
  CHECK(shared > 30);  // claims are timed together in many trials
}
