// Fabrics on SimGrid against closed forms: rail-optimized (platform/fabric_rail.cc: one rail
// switch inside a group, PXN's NVLink hop to the receiver's rail, the spine and its taper),
// fat trees of three tiers (platform/fabric_pods.cc: a taper per tier, routes only as high as
// needed) and switch planes (one aggregate fabric). Every probe runs in a child process (one
// engine per process).
#include <catch2/catch.hpp>
#include <functional>
#include <sstream>

#include "core/isolated_run.h"
#include "engine/probes.h"
#include "lowering/shortcuts.h"
#include "sim_report.h"
#include "test_support.h"
#include "workload/collective_time.h"

using namespace trident;
using namespace trident::testing;

namespace {

// Eight-GPU nodes (one NIC each GPU, 25 GB/s, 5 us), `per_group` nodes under each rail switch.
ClusterSpec rail_cluster(int nodes, int per_group, double taper, bool pxn) {
  ClusterSpec c = a100_cluster(nodes);
  c.network.topology = Topology::kRailOptimized;
  c.network.nodes_per_leaf = per_group;
  c.network.oversubscription = taper;
  c.network.pxn = pxn;
  return c;
}

// Returns the time of `pairs`' transfers of S bytes each, side by side, on GPUs [0, gpus) (at
// least those the pairs name).
double transfers(const ClusterSpec& c, const std::vector<std::pair<int, int>>& pairs, double S,
                 int gpus = 0) {
  std::vector<Phase> phases(1);
  for (const auto& pr : pairs) {
    phases[0].flows.push_back({pr.first, pr.second, S});
    gpus = std::max({gpus, pr.first + 1, pr.second + 1});
  }
  return isolated_double([&] { return probe_phase_series(c, gpus, {phases}).front(); });
}

}  // namespace

TEST_CASE("rail-optimized: a ring on one rail crosses one rail switch per edge",
          "[engine][network][fabric]") {
  const ClusterSpec c = rail_cluster(4, 4, 4, true);  // the taper is above the rail switch
  const double S = 1e9;
  const std::vector<int> rail = {0, 8, 16, 24};  // GPU 0 of every node
  const double t = isolated_double(
      [&] { return probe_collective_time(c, CollectiveOp::kAllReduce, {rail}, S, false); });
  CHECK(t == Approx(ring_all_reduce_time(4, S, 5e-6, 25e9, 1)).epsilon(1e-6));
  // Eight rails side by side: each on switches of its own.
  std::vector<std::vector<int>> rails;
  for (int r = 0; r < 8; ++r) rails.push_back({r, 8 + r, 16 + r, 24 + r});
  const double all = isolated_double(
      [&] { return probe_collective_time(c, CollectiveOp::kAllReduce, rails, S, false); });
  CHECK(all == Approx(t).epsilon(1e-6));
}

TEST_CASE("rail-optimized: PXN takes the node-mate's NIC on the receiver's rail",
          "[engine][network][fabric]") {
  const double S = 1e9;
  // Alone, a cross-rail transfer runs at the NIC's rate after the NVLink hop (pipelined): the
  // larger leg latency, the smaller bandwidth.
  ClusterSpec c = rail_cluster(3, 4, 1, true);
  CHECK(transfers(c, {{0, 9}}, S) == Approx(5e-6 + S / 25e9).epsilon(1e-6));
  // 0 -> 9 leaves through GPU 1's NIC (rail 1), as 1 -> 17 does: they share it.
  CHECK(transfers(c, {{0, 9}, {1, 17}}, S) == Approx(5e-6 + 2 * S / 25e9).epsilon(1e-6));
  // Without PXN each leaves through its own NIC and crosses the spine (not tapered here).
  c.network.pxn = false;
  CHECK(transfers(c, {{0, 9}, {1, 17}}, S) == Approx(5e-6 + S / 25e9).epsilon(1e-6));
  // PXN's NVLink hop is a link of its own: eight transfers from GPU 0 to the eight rails of
  // the next node share GPU 0's NVLink (300 GB/s), then run on NICs of their own: the
  // NVLink leg, with its latency, is the longer one.
  c.network.pxn = true;
  c.network.nic_bandwidth = 100e9;
  std::vector<std::pair<int, int>> fan;
  for (int r = 1; r < 8; ++r) fan.push_back({0, 8 + r});
  CHECK(transfers(c, fan, S) == Approx(2e-6 + 7 * S / 300e9).epsilon(1e-6));
}

TEST_CASE("rail-optimized: the spine and its taper", "[engine][network][fabric]") {
  const double S = 1e9;
  // Two groups of one node, taper 2: a rail switch's uplink carries half its one NIC.
  ClusterSpec c = rail_cluster(2, 1, 2, true);
  CHECK(transfers(c, {{0, 8}}, S) == Approx(5e-6 + S / (25e9 / 2)).epsilon(1e-6));
  // Inside one group: same rail, or another rail with PXN, never reaches the spine.
  c = rail_cluster(2, 2, 4, true);
  CHECK(transfers(c, {{0, 8}}, S) == Approx(5e-6 + S / 25e9).epsilon(1e-6));
  CHECK(transfers(c, {{0, 9}}, S) == Approx(5e-6 + S / 25e9).epsilon(1e-6));
  // Without PXN another rail is reached through the spine: link / taper (2 x 25 / 4 GB/s).
  c.network.pxn = false;
  CHECK(transfers(c, {{0, 9}}, S) == Approx(5e-6 + S / (2 * 25e9 / 4)).epsilon(1e-6));
  // Inside an island, NVLink as on every fabric.
  CHECK(transfers(c, {{0, 1}}, S) == Approx(2e-6 + S / 300e9).epsilon(1e-6));
}

TEST_CASE("rail-optimized: fast fidelity keeps its replica shortcut and agrees with full",
          "[engine][fidelity][fabric]") {
  struct Case {
    const char* name;
    int t, p, d;
    bool pxn;
    ParallelDim first;
  };
  // 64 GPUs, rail groups of two nodes: data-parallel rings on one rail cross the spine.
  const Case cases[] = {
      {"TP fills nodes", 8, 2, 4, true, ParallelDim::kTensor},
      {"two replicas per node", 4, 2, 8, true, ParallelDim::kTensor},
      {"two replicas per node, no PXN", 4, 2, 8, false, ParallelDim::kTensor},
      {"data-parallel ranks across rails", 2, 2, 16, true, ParallelDim::kData},
  };
  for (const Case& k : cases) {
    ClusterSpec cl = rail_cluster(8, 2, 1, k.pxn);
    Scenario sc = scenario(cl, gpt_model(8, 2048, 16, 1024, 32000),
                           plan(k.t, k.p, k.d, 1, 4, ScheduleKind::k1F1B));
    if (k.first == ParallelDim::kData) {
      sc.plan.placement = {ParallelDim::kData, ParallelDim::kTensor, ParallelDim::kPipeline};
    }
    INFO(k.name);
    const Shortcuts s = decide_shortcuts(sc, Fidelity::kFast);
    INFO(s.one_replica.reason);
    if (k.first == ParallelDim::kTensor) CHECK(s.one_replica.taken);
    const Report fast = simulate_report(sc, Fidelity::kFast);
    const Report full = simulate_report(sc, Fidelity::kFull);
    CHECK(fast.step_time_s == Approx(full.step_time_s).epsilon(0.01));
    CHECK(fast.dp_comm_exposed_s == Approx(full.dp_comm_exposed_s).epsilon(0.01));
    CHECK(fast.pp_comm_exposed_s == Approx(full.pp_comm_exposed_s).epsilon(0.01).margin(2e-6));
  }
}

namespace {

// Eight nodes, leaf groups of two, pods of four: taper 2 at the leaves and 2 at the pods.
ClusterSpec three_tiers() {
  ClusterSpec c = a100_cluster(8);
  c.network.nodes_per_leaf = 2;
  c.network.oversubscription = 2;
  c.network.tiers = 3;
  c.network.nodes_per_pod = 4;
  c.network.pod_oversubscription = 2;
  return c;
}

// Flows from every GPU of [from, from + n) to the GPU n further.
std::vector<std::pair<int, int>> shift(int from, int n) {
  std::vector<std::pair<int, int>> out;
  for (int g = from; g < from + n; ++g) out.push_back({g, g + n});
  return out;
}

}  // namespace

TEST_CASE("three-tier fat tree: each tier's taper, and routes only as high as needed",
          "[engine][network][fabric]") {
  const ClusterSpec c = three_tiers();
  // Every GPU built: a pod's core links carry its whole pod's NICs / 2 / 2.
  const auto transfers = [](const ClusterSpec& k, const std::vector<std::pair<int, int>>& pairs,
                            double bytes) { return ::transfers(k, pairs, bytes, 64); };
  const double S = 1e9, B = 25e9, lat = 5e-6;
  // Under one leaf: the NIC.
  CHECK(transfers(c, {{0, 8}}, S) == Approx(lat + S / B).epsilon(1e-6));
  // One leaf group's 16 GPUs to the other leaf of the pod: the leaf uplink, 16 NICs / 2.
  CHECK(transfers(c, shift(0, 16), S) == Approx(lat + S / (B / 2)).epsilon(1e-6));
  // One leaf group to the other pod: its leaf uplink as before, and pod 0's core uplink
  // (32 NICs / 2 / 2) carries these 16 flows at the same rate.
  CHECK(transfers(c, shift(16, 16), S) == Approx(lat + S / (B / 2)).epsilon(1e-6));
  // A whole pod to the other: 32 flows on a core uplink of 32 NICs / 2 / 2.
  CHECK(transfers(c, shift(0, 32), S) == Approx(lat + S / (B / 4)).epsilon(1e-6));
  // Both leaves of pod 0 swap halves: they never reach the core, only the leaf taper counts.
  std::vector<std::pair<int, int>> swap = shift(0, 16);
  for (int g = 16; g < 32; ++g) swap.push_back({g, g - 16});
  CHECK(transfers(c, swap, S) == Approx(lat + S / (B / 2)).epsilon(1e-6));
  // Two tiers with the same leaf taper: the core is not there.
  ClusterSpec two = c;
  two.network.tiers = 2;
  two.network.nodes_per_pod = 0;
  two.network.pod_oversubscription = 1;
  CHECK(transfers(two, shift(0, 32), S) == Approx(lat + S / (B / 2)).epsilon(1e-6));
}

TEST_CASE("switch planes: flows spread evenly over planes run as on one aggregate fabric",
          "[engine][network][fabric]") {
  const double S = 1e9;
  for (int planes : {4, 8}) {
    INFO(planes << " planes");
    ClusterSpec c = three_tiers();
    c.network.nic_bandwidth = 100e9;  // 800 Gb/s: 8 planes of 100 Gb/s
    c.network.planes = planes;
    // One plane: a copy of the fabric at nic / N, every flow's share S / N on it. The planes
    // side by side end with it; the aggregate fabric gives the same time.
    ClusterSpec one = c;
    one.network.planes = 1;
    one.network.nic_bandwidth = 100e9 / planes;
    for (const auto& flows :
         {std::vector<std::pair<int, int>>{{0, 8}}, shift(0, 32), shift(0, 16)}) {
      CHECK(transfers(c, flows, S, 64) ==
            Approx(transfers(one, flows, S / planes, 64)).epsilon(1e-9));
    }
    CHECK(transfers(c, shift(0, 32), S, 64) == Approx(5e-6 + S / (100e9 / 4)).epsilon(1e-6));
  }
}

TEST_CASE("three-tier fat tree: without taper a step takes as long as on two tiers",
          "[engine][fidelity][fabric]") {
  // Pipeline neighbours sit in other pods (t * d = 32 GPUs apart), data-parallel rings cross
  // leaf groups and pods: with no taper anywhere neither the core nor the spine binds.
  ClusterSpec two = a100_cluster(8);
  two.network.nodes_per_leaf = 2;
  ClusterSpec three = two;
  three.network.tiers = 3;
  three.network.nodes_per_pod = 4;
  const auto make = [](const ClusterSpec& cl) {
    return scenario(cl, gpt_model(8, 2048, 16, 1024, 32000),
                    plan(8, 2, 4, 1, 4, ScheduleKind::k1F1B));
  };
  const Report fast2 = simulate_report(make(two), Fidelity::kFast);
  const Report fast3 = simulate_report(make(three), Fidelity::kFast);
  const Report full3 = simulate_report(make(three), Fidelity::kFull);
  CHECK(fast3.step_time_s == Approx(fast2.step_time_s).epsilon(1e-9));
  CHECK(fast3.pp_comm_exposed_s == Approx(fast2.pp_comm_exposed_s).epsilon(1e-9));
  CHECK(fast3.step_time_s == Approx(full3.step_time_s).epsilon(0.01));
  CHECK(fast3.dp_comm_exposed_s == Approx(full3.dp_comm_exposed_s).epsilon(0.01));
}
