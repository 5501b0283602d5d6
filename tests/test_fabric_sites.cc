// Datacenters joined by WAN links (cluster.sites, platform/fabric_sites.cc) and hierarchical
// data parallelism across them (plan.num_distributed_optimizer_instances,
// lowering/collective_lowering.h lower_partial_data_parallel), against closed forms. Every probe
// runs in a child process (one engine per process).
#include <catch2/catch.hpp>

#include "config/checks.h"
#include "engine/probes.h"
#include "lowering/collective_lowering.h"
#include "lowering/shortcuts.h"
#include "sim_report.h"
#include "test_support.h"
#include "workload/nccl_model.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

constexpr double kNic = 25e9, kNet = 5e-6, kWan = 2e-3;

// `nodes` eight-GPU nodes in `sites` sites, leaf groups of two nodes, WAN `wan_bw` per site.
ClusterSpec sites_cluster(int nodes, int sites, double wan_bw, Topology topology) {
  ClusterSpec c = a100_cluster(nodes);
  c.network.topology = topology;
  c.network.nodes_per_leaf = 2;
  c.sites.count = sites;
  c.sites.wan_bandwidth = wan_bw;
  c.sites.wan_latency = kWan;
  return c;
}

double transfers(const ClusterSpec& c, const std::vector<std::pair<int, int>>& pairs, double S) {
  std::vector<Phase> phases(1);
  int gpus = 0;
  for (const auto& pr : pairs) {
    phases[0].flows.push_back({pr.first, pr.second, S});
    gpus = std::max({gpus, pr.first + 1, pr.second + 1});
  }
  return isolated_double([&] { return probe_phase_series(c, gpus, {phases}).front(); });
}

double lowered_time(const ClusterSpec& c, const std::vector<Phase>& phases, int gpus) {
  return isolated_double([&] { return probe_phase_series(c, gpus, {phases}).front(); });
}

}  // namespace

TEST_CASE("sites: a transfer between sites pays the WAN's latency and shares its links",
          "[engine][network][sites]") {
  const double S = 1e9;
  for (Topology topo : {Topology::kFatTree, Topology::kRailOptimized, Topology::kSingleSwitch}) {
    INFO(topology_name(topo));
    // Four nodes, two per site; the WAN carries one NIC's worth per direction.
    const ClusterSpec c = sites_cluster(4, 2, kNic, topo);
    // Node 0 to node 1 stays in site 0; node 0 to node 2 crosses.
    CHECK(transfers(c, {{0, 8}}, S) == Approx(kNet + S / kNic).epsilon(1e-9));
    CHECK(transfers(c, {{0, 16}}, S) == Approx(kNet + kWan + S / kNic).epsilon(1e-9));
    // Two transfers between the sites from different NICs share the WAN uplink.
    CHECK(transfers(c, {{0, 16}, {9, 25}}, S) == Approx(kNet + kWan + 2 * S / kNic).epsilon(1e-9));
    // Inside each site they run on links of their own.
    CHECK(transfers(c, {{0, 8}, {17, 25}}, S) == Approx(kNet + S / kNic).epsilon(1e-9));
  }
}

TEST_CASE("sites: a ring across sites pays the WAN latency per crossing, as the closed form",
          "[engine][network][sites]") {
  // Ample WAN bandwidth: the closed form (which knows the WAN's latency, not its capacity) is
  // exact. GPU 0 of each of 4 nodes, two per site: the ring crosses the WAN twice a lap.
  ClusterSpec c = sites_cluster(4, 2, 1e12, Topology::kFatTree);
  c.nccl.algorithm = CollectiveAlgorithm::kRing;  // a tree pays 2 (S - 1) WAN latencies instead
  const std::vector<int> ring = {0, 8, 16, 24};
  const double S = 64e6;
  CollectiveShape shape{4, 4, 1, 2};
  REQUIRE(group_sites(ring, c) == 2);
  const CollectivePlan plan = choose_collective_plan(CollectiveOp::kAllReduce, shape, S, c);
  const double closed = collective_plan_time(plan, c);
  const double t = isolated_double(
      [&] { return probe_collective_time(c, CollectiveOp::kAllReduce, {ring}, S, true); });
  CHECK(t == Approx(closed).epsilon(1e-6));
  // A lap crosses twice; 6 steps over 4 islands cross 3 times in all. Validation mode (every
  // ring step a phase) keeps a cross-site ring collapsed: the same time.
  ClusterSpec one = c;
  one.sites = SiteSpec();
  const double single = collective_plan_time(
      choose_collective_plan(CollectiveOp::kAllReduce, {4, 4, 1, 1}, S, one), one);
  CHECK(closed - single == Approx(3 * kWan).epsilon(1e-6));
  const double stepwise = isolated_double(
      [&] { return probe_collective_time(c, CollectiveOp::kAllReduce, {ring}, S, false); });
  CHECK(stepwise == Approx(t).epsilon(1e-9));
}

TEST_CASE("sites: hierarchical data parallelism moves half the WAN bytes of a flat ring",
          "[engine][network][sites]") {
  // Eight nodes in two sites; the data-parallel group is GPU 0 of every node. The WAN carries
  // an eighth of a NIC: it bounds both. Flat: reduce-scatter and all-gather each put (n-1)/n
  // of the buffer on each WAN direction. Two optimizer copies (one per site): the
  // reduce-scatter inside a site, the all-reduce of a quarter across the sites (each of the 4
  // pairs sends its quarter each way: the whole buffer per direction), the all-gather inside.
  const double W = kNic / 8, S = 1e9;
  const ClusterSpec c = sites_cluster(8, 2, W, Topology::kFatTree);
  std::vector<int> group;
  for (int n = 0; n < 8; ++n) group.push_back(8 * n);
  LoweringOptions opt;
  opt.cluster = &c;
  const auto island_of = [](int gpu) { return gpu / 8; };
  const auto step = [&](int instances) {
    std::vector<Phase> rs = lower_partial_data_parallel(CollectiveOp::kReduceScatter, {group}, S,
                                                        instances, island_of, opt);
    std::vector<Phase> ag = lower_partial_data_parallel(CollectiveOp::kAllGather, {group}, S,
                                                        instances, island_of, opt);
    return lowered_time(c, rs, 64) + lowered_time(c, ag, 64);
  };
  const double flat = step(1), hier = step(2);
  CHECK(flat == Approx(2 * (7.0 / 8) * S / W).epsilon(0.02));
  CHECK(hier == Approx(S / W + 2 * (3.0 / 4) * S / kNic).epsilon(0.02));
  CHECK(hier < 0.75 * flat);
}

TEST_CASE("sites: checks name the key that is wrong", "[config][sites]") {
  ClusterSpec c = sites_cluster(6, 4, 1e11, Topology::kFatTree);
  const auto first_key = [](const ClusterSpec& cl) {
    const std::vector<SpecIssue> issues = cluster_issues(cl);
    return issues.empty() ? std::string() : issues.front().keys.front();
  };
  CHECK(first_key(c) == "cluster.sites.count");  // 6 nodes into 4 sites
  c.sites.count = 3;
  CHECK(first_key(c).empty());  // two nodes a site: one leaf group each
  c.network.nodes_per_leaf = 4;
  CHECK(first_key(c).empty());  // a site smaller than a leaf group is one leaf group
  c.sites.wan_bandwidth = 0;
  CHECK(first_key(c) == "cluster.sites.wan_bandwidth");
  c = sites_cluster(8, 2, 1e11, Topology::kFatTree);
  c.network.nodes_per_leaf = 3;
  CHECK(first_key(c) == "cluster.sites.count");  // 4 nodes a site, leaves of 3
  c = sites_cluster(8, 1, 1e11, Topology::kFatTree);
  CHECK(first_key(c) == "cluster.sites.wan_bandwidth");  // a WAN with one site
}

TEST_CASE("sites: a step across sites, flat and with an optimizer copy per site",
          "[engine][fidelity][sites]") {
  // 8 nodes, 2 sites, TP 8 in each node, 2 stages, 4 replicas: stage 0 in site 0, stage 1 in
  // site 1 (placement tp-dp-pp), or each replica group across the sites (tp-pp-dp).
  const ClusterSpec c = sites_cluster(8, 2, kNic, Topology::kFatTree);
  PlanSpec p = plan(8, 2, 4, 1, 4, ScheduleKind::k1F1B);
  p.distributed_optimizer = true;
  p.dp_sharding = DpSharding::kOptim;
  const ModelSpec m = gpt_model(8, 2048, 16, 1024, 32000);
  Scenario sc = scenario(c, m, p);
  // The replica shortcut is off (the WAN is shared), so fast and full simulate every rank.
  const Shortcuts s = decide_shortcuts(sc, Fidelity::kFast);
  CHECK_FALSE(s.one_rank_flows.taken);
  CHECK_FALSE(s.one_replica.taken);
  const Report fast = simulate_report(sc, Fidelity::kFast);
  const Report full = simulate_report(sc, Fidelity::kFull);
  CHECK(fast.step_time_s == Approx(full.step_time_s).epsilon(0.01));
  // Data parallelism across the sites, flat and hierarchical: two copies of the optimizer
  // hold twice the optimizer state per GPU and move less over the WAN.
  sc.plan.placement = {ParallelDim::kTensor, ParallelDim::kPipeline, ParallelDim::kData};
  const Report flat = simulate_report(sc, Fidelity::kFast);
  sc.plan.distributed_optimizer_instances = 2;
  REQUIRE(plan_issues(sc.plan, sc.model, sc.cluster).empty());
  const Report hier = simulate_report(sc, Fidelity::kFast);
  const Report hier_full = simulate_report(sc, Fidelity::kFull);
  CHECK(hier.step_time_s == Approx(hier_full.step_time_s).epsilon(0.01));
  Scenario one_copy = sc;
  one_copy.plan.distributed_optimizer_instances = 1;
  CHECK(build_workload(sc).stages[0].memory.optimizer ==
        Approx(2 * build_workload(one_copy).stages[0].memory.optimizer).epsilon(1e-12));
  CHECK(hier.dp_comm_exposed_s < flat.dp_comm_exposed_s);
}
