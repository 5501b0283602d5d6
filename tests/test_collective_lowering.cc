// Collective lowering (lowering/collective_lowering, no SimGrid): rings, hierarchical
// all-reduces across islands pipelined over chunks, trees, NVLS, and mirrored ring edges, as
// phases of flows.
#include <catch2/catch.hpp>

#include "lowering/collective_lowering.h"

using namespace trident;

namespace {

ClusterSpec ring_cluster() {
  ClusterSpec c;
  c.nodes = 4;
  c.gpus_per_node = 8;
  c.nvlink = {8, 100e9, 1e-6, 1.0, 0};
  c.network.nic_bandwidth = 10e9;
  c.network.latency = 5e-6;
  c.network.nics_per_node = 8;
  c.nccl.algorithm = CollectiveAlgorithm::kRing;
  c.nccl.protocol = CollectiveProtocol::kSimple;
  return c;
}

}  // namespace

TEST_CASE("ring all-reduce lowers to 2(n-1) steps of S/n per GPU", "[lowering]") {
  const auto island = [](int gpu) { return gpu / 8; };
  const ClusterSpec c = ring_cluster();
  LoweringOptions every_step;
  every_step.collapse_steps = false;
  every_step.cluster = &c;
  const auto phases =
      lower_collective(CollectiveOp::kAllReduce, {{0, 1, 2, 3}}, 400, island, every_step);
  REQUIRE(phases.size() == 6);
  for (const Phase& ph : phases) {
    REQUIRE(ph.flows.size() == 4);
    CHECK(ph.flows[0].bytes == 100);
    CHECK(ph.flows[3].src == 3);
    CHECK(ph.flows[3].dst == 0);
  }
  // NCCL's ring latency: 2(n-1) steps of the route latency when no protocol cost is added.
  CHECK(phases[0].latency == Approx(6e-6));
  LoweringOptions collapsed_opt;
  collapsed_opt.cluster = &c;
  const auto collapsed =
      lower_collective(CollectiveOp::kAllReduce, {{0, 1, 2, 3}}, 400, island, collapsed_opt);
  REQUIRE(collapsed.size() == 1);
  CHECK(collapsed[0].steps == 6);
  CHECK(collapsed[0].flows[0].bytes == 600);
}

TEST_CASE("a hierarchical all-reduce overlaps its island and network stages over chunks",
          "[lowering]") {
  const auto island = [](int gpu) { return gpu / 8; };
  ClusterSpec c = ring_cluster();
  c.nccl.pipeline_chunk = 100;
  LoweringOptions opt;
  opt.cluster = &c;
  // 2 islands x 2 members, 400 bytes in 4 chunks: reduce-scatter inside (1 step), ring across
  // (2 steps on S/(c k)), all-gather inside.
  const auto phases = lower_collective(CollectiveOp::kAllReduce, {{0, 1, 8, 9}}, 400, island, opt);
  REQUIRE(phases.size() == 5);  // fill, body (three side by side), drain
  CHECK(!phases[0].with_next);
  CHECK(phases[0].flows.size() == 4);          // two intra-island rings of 2
  CHECK(phases[0].flows[0].bytes == 200 / 4);  // the first chunk's reduce-scatter
  CHECK(phases[1].with_next);
  CHECK(phases[1].flows[0].bytes == 150);  // the other chunks' reduce-scatter
  CHECK(phases[2].with_next);
  CHECK(phases[2].flows[0].src == 0);
  CHECK(phases[2].flows[0].dst == 8);
  CHECK(phases[2].flows[0].bytes == 2 * 100);  // 2 steps of S/(c k), every chunk
  CHECK(!phases[3].with_next);
  CHECK(phases[4].flows[0].bytes == 50);  // the last chunk's all-gather
  // One chunk: the three stages one after another.
  c.nccl.pipeline_chunk = 1e6;
  CHECK(lower_collective(CollectiveOp::kAllReduce, {{0, 1, 8, 9}}, 400, island, opt).size() == 3);
  // One member per island: a flat ring.
  CHECK(lower_collective(CollectiveOp::kAllReduce, {{0, 8, 16}}, 300, island, opt).size() == 1);
}

TEST_CASE("a tree all-reduce chains inside islands and moves 2(k-1)/k of 1/c across",
          "[lowering]") {
  const auto island = [](int gpu) { return gpu / 8; };
  ClusterSpec c = ring_cluster();
  c.nccl.algorithm = CollectiveAlgorithm::kTree;
  c.nccl.pipeline_chunk = 1e9;
  LoweringOptions opt;
  opt.cluster = &c;
  const auto phases =
      lower_collective(CollectiveOp::kAllReduce, {{0, 1, 8, 9, 16, 17}}, 600, island, opt);
  REQUIRE(phases.size() == 3);
  CHECK(phases[0].flows[0].bytes == 600);       // the chain forwards the whole buffer
  CHECK(phases[1].flows[0].bytes == 400);       // 2 (k-1)/k * S / c across, k = 3
  CHECK(phases[1].flows[0].efficiency == 0.9);  // tree_bandwidth
  // tuning.cc: 2 * ((c - 1) * intra + ceil(log2 k) * inter) = 2 * (1 us + 2 * 5 us).
  CHECK(phases[0].latency == Approx(22e-6));
}

TEST_CASE("a mirrored ring edge carries one edge's collapsed bytes", "[lowering]") {
  const ClusterSpec c = ring_cluster();
  const CollectivePlan plan =
      make_collective_plan(CollectiveOp::kAllReduce, {8, 8, 1}, 800, c, CollectiveAlgorithm::kRing,
                           CollectiveProtocol::kSimple);
  const auto phases = lower_mirrored(plan, 24, c);
  REQUIRE(phases.size() == 1);
  CHECK(phases[0].steps == 14);
  CHECK(phases[0].flows[0].src == 24);
  CHECK(phases[0].flows[0].dst == 24);
  CHECK(phases[0].flows[0].bytes == 1400);
  CHECK(phases[0].latency == Approx(14 * 5e-6));
}

TEST_CASE("lowered for one GPU: its ring edges as flows, the others in closed form", "[lowering]") {
  const auto island = [](int gpu) { return gpu / 8; };
  const ClusterSpec c = ring_cluster();
  LoweringOptions opt;
  opt.cluster = &c;
  opt.simulated = [](int gpu) { return gpu == 0; };
  // A ring inside one island: the edges out of and into GPU 0 are flows; 1->2 and 2->3 meet no
  // simulated traffic and take latency + bytes / bandwidth.
  const auto ring = lower_collective(CollectiveOp::kAllReduce, {{0, 1, 2, 3}}, 400, island, opt);
  REQUIRE(ring.size() == 1);
  REQUIRE(ring[0].flows.size() == 2);
  CHECK(ring[0].flows[0].src == 0);
  CHECK(ring[0].flows[0].dst == 1);
  CHECK(ring[0].flows[1].src == 3);
  CHECK(ring[0].flows[1].dst == 0);
  CHECK(ring[0].floor_s == Approx(1e-6 + 600 / 100e9));
  CHECK(ring[0].floor_latency == 1e-6);
  // A group of 16 over two islands (hierarchical): mirrored, GPU 0's inter-island edge loops
  // through its NIC and every NVLink stage is closed form.
  opt.mirror_inter = opt.closed_form_intra = true;
  std::vector<int> group(16);
  for (int i = 0; i < 16; ++i) group[i] = i;
  const auto spanning = lower_collective(CollectiveOp::kReduceScatter, {group}, 1600, island, opt);
  REQUIRE(spanning.size() == 2);  // intra reduce-scatter, then the inter-island ring
  CHECK(spanning[0].flows.empty());
  CHECK(spanning[0].floor_s == Approx(1e-6 + 1400 / 100e9));  // (c-1)/c of 1600
  REQUIRE(spanning[1].flows.size() == 1);
  CHECK(spanning[1].flows[0].src == 0);
  CHECK(spanning[1].flows[0].dst == 0);
  CHECK(spanning[1].flows[0].bytes == Approx(1600.0 / 16));
  CHECK(spanning[1].floor_s == 0);
  // Members accepted: replicas filling island 0 of a group over four islands keep their ring
  // inside it and one loopback each; the other islands' rings are dropped.
  LoweringOptions replicas;
  replicas.cluster = &c;
  replicas.mirror_inter = true;
  replicas.simulated = [](int gpu) { return gpu < 8; };
  const auto dp = lower_collective(CollectiveOp::kReduceScatter, {{0, 1, 8, 9, 16, 17, 24, 25}},
                                   800, island, replicas);
  REQUIRE(dp.size() == 2);
  REQUIRE(dp[0].flows.size() == 2);  // 0->1, 1->0 inside island 0
  CHECK(dp[0].floor_s == 0);
  REQUIRE(dp[1].flows.size() == 2);  // 0 and 1 out through their NICs and back
  CHECK(dp[1].flows[0].src == dp[1].flows[0].dst);
}
