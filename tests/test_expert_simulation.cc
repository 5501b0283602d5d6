// Expert parallelism on SimGrid beyond ETP = t (lowering/all_to_all, layout/expert_ranks,
// lowering/all_to_all_shortcut): the NIC-collapsed all-to-all of fast mode against one flow per
// pair (full fidelity), with expert groups folding tensor (ETP = 1) and context ranks. Each
// simulation runs in a child process.
#include <catch2/catch.hpp>
#include <numeric>
#include <vector>

#include "config/scenario.h"
#include "lowering/all_to_all.h"
#include "lowering/all_to_all_shortcut.h"
#include "lowering/shortcuts.h"
#include "sim_report.h"
#include "test_support.h"

using namespace trident;
using namespace trident::testing;

namespace {

// A small SwiGLU MoE: 4 layers, hidden 2048, 16 experts of 2048, top-2 in every layer.
Scenario moe_scenario(int nodes, int t, int cp, int d, int ep, int etp) {
  ModelSpec m = small_moe_model();
  PlanSpec pl = plan(t, 2, d, 1, 4, ScheduleKind::k1F1B);
  pl.context = cp;
  pl.expert_parallel = ep;
  pl.expert_tensor_parallel = etp;
  pl.sequence_parallel = t > 1;
  pl.moe_dispatcher = MoeDispatcher::kAllToAll;
  if (cp > 1) pl.attention_backend = AttentionBackend::kFlash;
  return scenario(a100_cluster(nodes), m, pl);
}

}  // namespace

TEST_CASE("an all-to-all through the NICs: one flow per member across islands", "[moe][a2a]") {
  // Two islands of 2: members 0, 1 | 2, 3. Member 0 is hot (load 2 of 4).
  const auto island = [](int gpu) { return gpu / 2; };
  const double B = 4e6;
  const auto m = imbalanced_all_to_all_bytes(4, B, 2, false);
  const std::vector<Phase> ph = lower_all_to_all_via_nics({{0, 1, 2, 3}}, m, island);
  REQUIRE(ph.size() == 1);
  // Per member: its island peer over NVLink (a ring of two), and one loopback through its NIC.
  REQUIRE(ph[0].flows.size() == 4 + 4);
  double loop0 = 0, loop2 = 0, nvl10 = 0;
  for (const Flow& f : ph[0].flows) {
    if (f.src == f.dst && f.src == 0) loop0 = f.bytes;
    if (f.src == f.dst && f.src == 2) loop2 = f.bytes;
    if (f.src == 1 && f.dst == 0) nvl10 = f.bytes;
  }
  // Member 0 receives 2 B / 4 from each of members 2 and 3 and sends B / 4 x 2 / 3 to each.
  CHECK(loop0 == Approx(2 * 2 * B / 4).epsilon(1e-15));
  CHECK(nvl10 == m[1][0]);
  CHECK(loop2 == Approx(std::max(m[2][0] + m[2][1], m[0][2] + m[1][2])).epsilon(1e-15));
  // Uniform: each loopback carries the (n - c) B / n the member sends across islands.
  const std::vector<Phase> u = lower_all_to_all_via_nics(
      {{0, 1, 2, 3}}, std::vector<std::vector<double>>(4, std::vector<double>(4, B / 4)), island);
  for (const Flow& f : u[0].flows) CHECK(f.bytes == (f.src == f.dst ? 2 * B / 4 : B / 4));
}

TEST_CASE("the NIC all-to-all takes the per-pair flows' time alone", "[engine][moe][a2a]") {
  // EP 16 over two DGX H100 nodes and EP 64 over eight, 4096 tokens x top-8 x 7168 in BF16
  // per GPU, balanced and with member 0 carrying 1.5x its share; dispatch and combine.
  const ClusterSpec c = load_scenario(source_path("scenarios/llama3-8b-dgx-h100.yaml"), {}).cluster;
  const auto island_of = [](int gpu) { return gpu / 8; };
  for (int ep : {16, 64}) {
    std::vector<int> group(ep);
    std::iota(group.begin(), group.end(), 0);
    for (double load : {1.0, 1.5}) {
      for (bool combine : {false, true}) {
        INFO("EP " << ep << " load " << load << (combine ? " combine" : " dispatch"));
        const auto m = imbalanced_all_to_all_bytes(ep, 4096.0 * 8 * 7168 * 2, load, combine);
        const std::vector<Phase> pairs = lower_all_to_all({group}, m);
        const std::vector<Phase> nics = lower_all_to_all_via_nics({group}, m, island_of);
        REQUIRE(nics.size() == 1);
        CHECK(nics[0].flows.size() == size_t(2 * ep));  // a loopback and a ring flow each
        const std::vector<double> t = isolated_phase_series(c, ep, [&] {
          return std::vector<std::vector<Phase>>{pairs, nics};
        });
        REQUIRE(t.size() == 2);
        CHECK(t[1] == Approx(t[0]).epsilon(0.01));
      }
    }
  }
}

TEST_CASE("the NIC all-to-all shortcut needs members with many remote peers", "[moe][shortcuts]") {
  // EP 16 over two 8-GPU nodes: 8 remote peers each; EP 8 in one node: none.
  CHECK(decide_shortcuts(moe_scenario(4, 1, 1, 16, 16, 1), Fidelity::kFast).nic_all_to_all.taken);
  CHECK_FALSE(
      decide_shortcuts(moe_scenario(4, 1, 1, 16, 8, 1), Fidelity::kFast).nic_all_to_all.taken);
  CHECK_FALSE(
      decide_shortcuts(moe_scenario(4, 1, 1, 16, 16, 1), Fidelity::kFull).nic_all_to_all.taken);
  Scenario tapered = moe_scenario(4, 1, 1, 16, 16, 1);
  tapered.cluster.network.topology = Topology::kFatTree;
  tapered.cluster.network.oversubscription = 2;
  CHECK_FALSE(decide_shortcuts(tapered, Fidelity::kFast).nic_all_to_all.taken);
}

TEST_CASE("fast and full fidelity agree with the NIC all-to-all and folded expert groups",
          "[engine][moe][fidelity]") {
  struct Case {
    const char* name;
    int nodes, t, cp, d, ep, etp;
  };
  const Case cases[] = {
      {"EP 16 over two nodes", 4, 1, 1, 16, 16, 1},
      {"ETP 1: EP 16 over the TP and data ranks", 4, 2, 1, 8, 16, 1},
      {"ETP 1: EP 4 inside TP x data", 4, 2, 1, 8, 4, 1},
      {"CP 2: EP 16 over the context and data ranks", 4, 1, 2, 8, 16, 1},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    Scenario sc = moe_scenario(c.nodes, c.t, c.cp, c.d, c.ep, c.etp);
    for (bool zero1 : {false, true}) {
      INFO("distributed optimizer and overlap_grad_reduce: " << zero1);
      sc.plan.distributed_optimizer = zero1;
      sc.plan.overlap_grad_reduce = zero1;
      const Report fast = simulate_report(sc, Fidelity::kFast);
      const Report full = simulate_report(sc, Fidelity::kFull);
      CHECK(fast.step_time_s == Approx(full.step_time_s).epsilon(0.01));
      // Gradient buckets beside the backward all-to-alls share the NICs, which max-min splits
      // by flow count: one collapsed flow against a bucket's gets half the NIC where its
      // per-pair flows got most of it (measured: up to 2.5 % more exposed EP time here).
      const double ep_tolerance = zero1 ? 0.03 : 0.01;
      CHECK(fast.ep_comm_exposed_s == Approx(full.ep_comm_exposed_s).epsilon(ep_tolerance));
      CHECK(fast.ep_comm_exposed_s > 0);
    }
  }
}

TEST_CASE("overlapped expert gradient buckets hide the expert-data-parallel reduction",
          "[engine][moe]") {
  // ETP 1, EP 4 inside t x d = 16 ranks: EDP = 4 reduces the whole experts' gradients. With
  // overlap_grad_reduce their buckets reduce beside the backward, as the dense ones do.
  Scenario sc = moe_scenario(4, 2, 1, 8, 4, 1);
  sc.plan.distributed_optimizer = true;
  sc.plan.overlap_grad_reduce = false;
  const Report serial = simulate_report(sc, Fidelity::kFast);
  sc.plan.overlap_grad_reduce = true;
  const Report overlapped = simulate_report(sc, Fidelity::kFast);
  CHECK(overlapped.dp_comm_exposed_s < serial.dp_comm_exposed_s);
  CHECK(overlapped.step_time_s < serial.step_time_s);
}

TEST_CASE("whole islands of replicas stand for the rest when the expert groups span them",
          "[moe][shortcuts]") {
  // EP 16 = d over two 8-GPU nodes per stage: replicas 0..7 fill one node, and every member's
  // collapsed all-to-all flows (out through its own NIC and back, to its island neighbour)
  // are alike in both nodes.
  const Scenario sc = moe_scenario(4, 1, 1, 16, 16, 1);
  const Shortcuts fast = decide_shortcuts(sc, Fidelity::kFast);
  REQUIRE(fast.nic_all_to_all.taken);
  CHECK(fast.one_replica.taken);
  CHECK(fast.replicas == 8);
  CHECK(simulated_scope(sc.plan, fast).replicas == 8);  // the activity estimate counts 8 of 16
  CHECK_FALSE(decide_shortcuts(sc, Fidelity::kFull).one_replica.taken);
  // Imbalanced routing: the node holding EP rank 0 sees other traffic than the other.
  Scenario hot = sc;
  hot.plan.moe_load_imbalance = 1.5;
  CHECK_FALSE(decide_shortcuts(hot, Fidelity::kFast).one_replica.taken);
  // EP 8 inside a node: per-pair flows (no NIC collapse), but on each island's own NVLink
  // links, alike in every island (the next test case).
  CHECK(decide_shortcuts(moe_scenario(4, 1, 1, 16, 8, 1), Fidelity::kFast).one_replica.taken);
  // Expert groups of 8 over 4 islands (data parallelism outermost): per-pair flows across
  // islands reach every replica.
  Scenario spread = moe_scenario(4, 1, 1, 16, 8, 1);
  spread.plan.placement = {ParallelDim::kTensor, ParallelDim::kPipeline, ParallelDim::kData};
  CHECK_FALSE(decide_shortcuts(spread, Fidelity::kFast).one_replica.taken);
  // Sharded gradients keep the collapse, and so this, off.
  Scenario zero2 = sc;
  zero2.plan.dp_sharding = DpSharding::kOptimGrads;
  CHECK_FALSE(decide_shortcuts(zero2, Fidelity::kFast).one_replica.taken);
}

TEST_CASE("expert groups inside islands: the replicas of one island time the step as all do",
          "[engine][moe][fidelity]") {
  // EP 8 inside each 8-GPU node: per-pair all-to-all flows on the island's NVLink, alike in
  // every island whatever the routing imbalance. The reference simulates every replica (a
  // fat tree tapered by 1e-9 turns the replica shortcut off and slows nothing measurably). The
  // taper also turns collapsed_flex off, which under contention with overlapped gradient
  // buckets differs by itself (shortcuts.h): flex is compared without them.
  for (MoeDispatcher dispatcher : {MoeDispatcher::kAllToAll, MoeDispatcher::kFlex}) {
    for (double imbalance : {1.0, 1.3}) {
      for (bool zero1 : {false, true}) {
        if (dispatcher == MoeDispatcher::kFlex && zero1) continue;
        INFO("flex " << (dispatcher == MoeDispatcher::kFlex) << ", imbalance " << imbalance
                     << ", distributed optimizer and overlap_grad_reduce " << zero1);
        Scenario sc = moe_scenario(4, 1, 1, 16, 8, 1);
        sc.plan.placement = {ParallelDim::kData, ParallelDim::kTensor, ParallelDim::kPipeline};
        sc.plan.moe_dispatcher = dispatcher;
        sc.plan.moe_load_imbalance = imbalance;
        sc.plan.distributed_optimizer = zero1;
        sc.plan.overlap_grad_reduce = zero1;
        Scenario every = sc;
        every.cluster.network.oversubscription = 1 + 1e-9;
        const Shortcuts s = decide_shortcuts(sc, Fidelity::kFast);
        INFO(s.one_replica.reason);
        REQUIRE(s.one_replica.taken);
        CHECK(s.replicas == 8);
        REQUIRE_FALSE(decide_shortcuts(every, Fidelity::kFast).one_replica.taken);
        const Report few = simulate_report(sc, Fidelity::kFast);
        const Report all = simulate_report(every, Fidelity::kFast);
        CHECK(few.step_time_s == Approx(all.step_time_s).epsilon(1e-6));
        CHECK(few.ep_comm_exposed_s == Approx(all.ep_comm_exposed_s).margin(1e-9).epsilon(1e-6));
        CHECK(few.dp_comm_exposed_s == Approx(all.dp_comm_exposed_s).margin(1e-9).epsilon(1e-6));
        CHECK(few.pp_comm_exposed_s == Approx(all.pp_comm_exposed_s).margin(1e-9).epsilon(1e-6));
      }
    }
  }
}

TEST_CASE("replicas standing for the rest of their expert groups time the step as all do",
          "[engine][moe][fidelity]") {
  // The same plan with a routing imbalance of one part in 1e9 simulates every replica; its
  // step differs by about that much, so the two agree to 1e-6 where the shortcut is exact.
  struct Case {
    const char* name;
    int t, d, ep, replicas;
    MoeDispatcher dispatcher;
  };
  const Case cases[] = {
      {"EP 16 = d over two nodes", 1, 16, 16, 8, MoeDispatcher::kAllToAll},
      {"ETP 1: EP 16 over t x d", 2, 8, 16, 4, MoeDispatcher::kAllToAll},
      {"flex EP 16 = d over two nodes", 1, 16, 16, 8, MoeDispatcher::kFlex},
      // Expert-data-parallel groups of 2 (EP x ETP < t x d): their rings mirrored as well.
      {"EP 16 of d 32: expert-data-parallel pairs", 1, 32, 16, 8, MoeDispatcher::kAllToAll},
      {"ETP 1: EP 16 over t x d 32, expert-data-parallel pairs", 2, 16, 16, 4,
       MoeDispatcher::kAllToAll},
      // TP 8 fills each island: one member of each data-parallel group per island, replica 0
      // alone stands for the rest (its expert groups span two islands, collapsed).
      {"TP 8 fills the islands: EP 16 over t x d 4", 8, 4, 16, 1, MoeDispatcher::kAllToAll},
      {"flex, TP 8 fills the islands: EP 16 over t x d 4", 8, 4, 16, 1, MoeDispatcher::kFlex},
  };
  for (const Case& c : cases) {
    for (bool zero1 : {false, true}) {
      INFO(c.name << "; distributed optimizer and overlap_grad_reduce: " << zero1);
      Scenario sc = moe_scenario(c.t * c.d * 2 / 8, c.t, 1, c.d, c.ep, 1);
      sc.plan.placement = {ParallelDim::kTensor, ParallelDim::kData, ParallelDim::kPipeline};
      sc.plan.moe_dispatcher = c.dispatcher;
      sc.plan.distributed_optimizer = zero1;
      sc.plan.overlap_grad_reduce = zero1;
      Scenario every = sc;
      every.plan.moe_load_imbalance = 1 + 1e-9;
      const Shortcuts s = decide_shortcuts(sc, Fidelity::kFast);
      REQUIRE(s.one_replica.taken);
      CHECK(s.replicas == c.replicas);
      REQUIRE_FALSE(decide_shortcuts(every, Fidelity::kFast).one_replica.taken);
      const Report few = simulate_report(sc, Fidelity::kFast);
      const Report all = simulate_report(every, Fidelity::kFast);
      CHECK(few.step_time_s == Approx(all.step_time_s).epsilon(1e-6));
      CHECK(few.ep_comm_exposed_s == Approx(all.ep_comm_exposed_s).epsilon(1e-6));
      CHECK(few.dp_comm_exposed_s == Approx(all.dp_comm_exposed_s).margin(1e-9).epsilon(1e-6));
      CHECK(few.pp_comm_exposed_s == Approx(all.pp_comm_exposed_s).margin(1e-9).epsilon(1e-6));
    }
  }
}
