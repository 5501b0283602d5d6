// NCCL's cost model (workload/nccl_model): the latency terms of NVIDIA/nccl
// src/graph/tuning.cc, which algorithms apply where, what the tuning picks, and the closed form
// of plans pipelined over chunks.
#include <catch2/catch.hpp>

#include "test_support.h"
#include "workload/nccl_model.h"

using namespace trident;
using namespace trident::testing;

namespace {

// 8-GPU islands of 100 GB/s at 1 us, 10 GB/s NICs at 5 us, NCCL costs set.
ClusterSpec model_cluster() {
  ClusterSpec c = a100_cluster(64);
  c.nvlink.bandwidth = 100e9;
  c.nvlink.latency = 1e-6;
  c.nvlink.protocol_efficiency = 1;
  c.network.nic_bandwidth = 10e9;
  c.network.latency = 5e-6;
  c.network.protocol_efficiency = 1;
  c.nccl.base_latency[static_cast<int>(CollectiveProtocol::kLL)] = 2e-6;
  c.nccl.base_latency[static_cast<int>(CollectiveProtocol::kLL128)] = 4e-6;
  c.nccl.base_latency[static_cast<int>(CollectiveProtocol::kSimple)] = 8e-6;
  c.nccl.step_latency[static_cast<int>(CollectiveProtocol::kSimple)] = 3e-6;
  return c;
}

const CollectiveAlgorithm kRing = CollectiveAlgorithm::kRing;
const CollectiveProtocol kSimple = CollectiveProtocol::kSimple;

}  // namespace

TEST_CASE("ring latency grows linearly with the ring length, by island and network steps",
          "[nccl]") {
  const ClusterSpec c = model_cluster();
  // tuning.cc: baseLat + (nsteps - nInterSteps) * intraLat + nInterSteps * interLat.
  for (int k : {2, 4, 16}) {
    const int n = 8 * k;
    const CollectivePlan p =
        make_collective_plan(CollectiveOp::kAllReduce, {n, k, 8}, 1e9, c, kRing, kSimple);
    const double expected = 8e-6 + (2 * (n - 1) - 2 * (k - 1)) * 4e-6 + 2 * (k - 1) * 8e-6;
    CHECK(p.latency == Approx(expected).epsilon(1e-12));
  }
  const CollectivePlan rs =
      make_collective_plan(CollectiveOp::kReduceScatter, {8, 1, 8}, 1e6, c, kRing, kSimple);
  CHECK(rs.latency == Approx(8e-6 + 7 * 4e-6).epsilon(1e-12));
}

TEST_CASE("tree latency grows with the depth of the tree across islands", "[nccl]") {
  const ClusterSpec c = model_cluster();
  for (int k : {2, 3, 4, 64}) {
    const CollectivePlan p = make_collective_plan(CollectiveOp::kAllReduce, {8 * k, k, 8}, 1e6, c,
                                                  CollectiveAlgorithm::kTree, kSimple);
    const int depth = k == 2 ? 1 : k <= 4 ? 2 : 6;
    // tuning.cc: baseLat + 2 * ((nRanks/nNodes - 1) * intraLat + log2(nNodes) * interLat).
    CHECK(p.latency == Approx(8e-6 + 2 * (7 * 4e-6 + depth * 8e-6)).epsilon(1e-12));
  }
}

TEST_CASE("algorithms apply where NCCL runs them", "[nccl]") {
  ClusterSpec c = model_cluster();
  const CollectiveShape island{8, 1, 8}, across{16, 2, 8}, one_each{4, 4, 1}, uneven{12, 2, 0};
  const auto ar = CollectiveOp::kAllReduce;
  CHECK(algorithm_applies(CollectiveAlgorithm::kTree, ar, across, c));
  CHECK(algorithm_applies(CollectiveAlgorithm::kTree, ar, one_each, c));
  CHECK_FALSE(algorithm_applies(CollectiveAlgorithm::kTree, ar, island, c));
  CHECK_FALSE(algorithm_applies(CollectiveAlgorithm::kTree, ar, uneven, c));
  CHECK_FALSE(algorithm_applies(CollectiveAlgorithm::kTree, CollectiveOp::kAllGather, across, c));
  // No in-switch reduction on this cluster: no NVLS of either kind.
  CHECK_FALSE(algorithm_applies(CollectiveAlgorithm::kNvls, ar, island, c));
  c.nvlink.in_switch_reduction_efficiency = 0.6;
  CHECK(algorithm_applies(CollectiveAlgorithm::kNvls, ar, island, c));
  CHECK_FALSE(algorithm_applies(CollectiveAlgorithm::kNvls, ar, across, c));
  CHECK(algorithm_applies(CollectiveAlgorithm::kNvlsTree, ar, across, c));
  CHECK_FALSE(algorithm_applies(CollectiveAlgorithm::kNvlsTree, ar, one_each, c));
  // A forced algorithm that does not apply falls back to the ring, as NCCL_ALGO does.
  c.nccl.algorithm = CollectiveAlgorithm::kNvls;
  CHECK(choose_collective_plan(ar, across, 1e9, c).algorithm == CollectiveAlgorithm::kRing);
  CHECK(choose_collective_plan(ar, island, 1e9, c).algorithm == CollectiveAlgorithm::kNvls);
}

TEST_CASE("the tuning picks LL for small messages, Simple for large, tree at scale", "[nccl]") {
  const ClusterSpec c = model_cluster();
  const CollectiveShape island{8, 1, 8};
  CHECK(choose_collective_plan(CollectiveOp::kAllReduce, island, 1024, c).protocol ==
        CollectiveProtocol::kLL);
  CHECK(choose_collective_plan(CollectiveOp::kAllReduce, island, 1e9, c).protocol == kSimple);
  // 512 islands of one GPU: a ring pays 2 * 511 network steps, the tree 2 * 9 levels.
  const CollectivePlan wide =
      choose_collective_plan(CollectiveOp::kAllReduce, {512, 512, 1}, 1e6, c);
  CHECK(wide.algorithm == CollectiveAlgorithm::kTree);
  // Large buffers on two islands: the ring's bandwidth wins over the tree's 0.9.
  CHECK(choose_collective_plan(CollectiveOp::kAllReduce, {2, 2, 1}, 1e9, c).algorithm == kRing);
  // The choice is the least time among the candidates.
  const CollectivePlan best = choose_collective_plan(CollectiveOp::kAllReduce, island, 1e5, c);
  for (CollectiveProtocol p :
       {CollectiveProtocol::kLL, CollectiveProtocol::kLL128, CollectiveProtocol::kSimple}) {
    CHECK(collective_plan_time(best, c) <=
          collective_plan_time(
              make_collective_plan(CollectiveOp::kAllReduce, island, 1e5, c, kRing, p), c));
  }
}

TEST_CASE("a hierarchical ring pipelined over m chunks: fill, overlapped body, drain", "[nccl]") {
  ClusterSpec c = model_cluster();
  c.nccl.base_latency[static_cast<int>(kSimple)] = 0;
  c.nccl.step_latency[static_cast<int>(kSimple)] = 0;
  c.nccl.pipeline_chunk = 1e8;
  const double S = 8e8;  // 8 chunks
  const int k = 4;
  const CollectivePlan p =
      make_collective_plan(CollectiveOp::kAllReduce, {8 * k, k, 8}, S, c, kRing, kSimple);
  REQUIRE(p.chunks == 8);
  REQUIRE(p.stages.size() == 3);
  const double intra = S * 7 / 8 / 100e9;            // reduce-scatter (= all-gather)
  const double inter = S / 32 * 2 * (k - 1) / 10e9;  // ring across islands on S/c
  const double m = 8;
  const double fill = 1e-6 + intra / m, drain = 1e-6 + intra / m;
  // Body: both island stages share the NVLink links; the network stage runs beside them.
  const double body = std::max(1e-6 + 2 * intra * (m - 1) / m, 5e-6 + inter);
  const double latency = (2 * 31 - 2 * 3) * 1e-6 + 2 * 3 * 5e-6;  // > the routes' 7 us
  CHECK(collective_plan_time(p, c) == Approx(latency + fill + body + drain - 7e-6).epsilon(1e-12));
  // Overlap beats running the three stages one after another.
  CHECK(collective_plan_time(p, c) < latency + 2 * intra + inter);
}

TEST_CASE("bus bandwidth factors are those of nccl-tests", "[nccl]") {
  CHECK(bus_bandwidth_factor(CollectiveOp::kAllReduce, 8) == 14.0 / 8);
  CHECK(bus_bandwidth_factor(CollectiveOp::kAllGather, 8) == 7.0 / 8);
  CHECK(bus_bandwidth_factor(CollectiveOp::kReduceScatter, 16) == 15.0 / 16);
  CHECK(bus_bandwidth_factor(CollectiveOp::kAllReduce, 1) == 0);
}
