// Network probes on SimGrid (engine/probes): one transfer, ring and in-switch all-reduces, fat
// trees with oversubscription, and collectives sharing NICs, against closed forms. Every probe
// runs in a child process (one engine per process).
#include <catch2/catch.hpp>
#include <functional>
#include <sstream>

#include "core/isolated_run.h"
#include "engine/probes.h"
#include "sim_report.h"
#include "test_support.h"

using namespace trident;
using namespace trident::testing;

namespace {}  // namespace

TEST_CASE("a transfer over one link takes S/B + latency", "[engine][network]") {
  ClusterSpec c = a100_cluster(2);
  const double S = 1e9;
  // Inside an island: NVLink 300 GB/s, 2 us.
  const double nvl = isolated_double([&] { return probe_transfer_time(c, 0, 3, S); });
  CHECK(nvl == Approx(S / 300e9 + 2e-6).epsilon(1e-3));
  // Across nodes: 200 Gb/s = 25 GB/s NIC, 5 us.
  const double net = isolated_double([&] { return probe_transfer_time(c, 1, 9, S); });
  CHECK(net == Approx(S / 25e9 + 5e-6).epsilon(1e-3));
  // Protocol efficiency stretches the transfer, never the latency.
  c.nvlink.protocol_efficiency = 0.8;
  const double eff = isolated_double([&] { return probe_transfer_time(c, 0, 3, S); });
  CHECK(eff == Approx(S / (0.8 * 300e9) + 2e-6).epsilon(1e-3));
}

TEST_CASE("ring all-reduce in one island takes 2(n-1)/n S/B plus latencies",
          "[engine][collective]") {
  const ClusterSpec c = a100_cluster(1);
  for (int n : {2, 4, 8}) {
    std::vector<int> group;
    for (int i = 0; i < n; ++i) group.push_back(i);
    for (double S : {1e6, 256e6}) {
      const double expected = 2.0 * (n - 1) / n * S / 300e9 + 2.0 * (n - 1) * 2e-6;
      for (bool collapse : {false, true}) {
        const double t = isolated_double([&] {
          return probe_collective_time(c, CollectiveOp::kAllReduce, {group}, S, collapse);
        });
        CHECK(t == Approx(expected).epsilon(0.01));
        CHECK(ring_all_reduce_time(n, S, 2e-6, 300e9, 1.0) == Approx(expected).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("fat tree: transfers across leaf groups, and oversubscription thins them",
          "[engine][network]") {
  ClusterSpec c = a100_cluster(4);
  c.network.nodes_per_leaf = 2;  // two leaf groups of two nodes
  const double S = 1e9;
  for (auto [src, dst] : {std::pair{0, 31}, std::pair{9, 17}, std::pair{0, 9}}) {
    const double t = isolated_double([&] { return probe_transfer_time(c, src, dst, S); });
    CHECK(t == Approx(S / 25e9 + 5e-6).epsilon(1e-3));
  }
  // Every GPU of the first leaf group talks to its peer in the second: 16 flows each way.
  std::vector<std::vector<int>> pairs;
  for (int g = 0; g < 16; ++g) pairs.push_back({g, g + 16});
  const double full = isolated_double(
      [&] { return probe_collective_time(c, CollectiveOp::kAllReduce, pairs, S, true); });
  c.network.oversubscription = 4;
  const double thin = isolated_double(
      [&] { return probe_collective_time(c, CollectiveOp::kAllReduce, pairs, S, true); });
  CHECK(thin == Approx(4 * full).epsilon(0.02));
}

TEST_CASE("in-switch reduction: an island all-reduce moves the buffer once each way",
          "[engine][collective]") {
  ClusterSpec c = a100_cluster(1);
  c.nvlink.bandwidth = 450e9;
  c.nvlink.in_switch_reduction_efficiency = 0.6;
  const double S = 1e9;
  const std::vector<int> group = {0, 1, 2, 3, 4, 5, 6, 7};
  const double t = isolated_double(
      [&] { return probe_collective_time(c, CollectiveOp::kAllReduce, {group}, S, true); });
  CHECK(t == Approx(2e-6 + S / (0.6 * 450e9)).epsilon(1e-3));
  CHECK(island_collective_time(CollectiveOp::kAllReduce, 8, S, c) ==
        Approx(2e-6 + S / (0.6 * 450e9)));
  // Reduce-scatter and all-gather stay rings.
  CHECK(island_collective_time(CollectiveOp::kAllGather, 8, S, c) ==
        Approx(7 * (2e-6 + S / (8 * 450e9))));
}

TEST_CASE("collectives that share a NIC slow each other down", "[engine][collective]") {
  ClusterSpec c = a100_cluster(2);
  c.network.nics_per_node = 1;  // all eight GPUs of a node share one NIC
  const double S = 100e6;
  const double one = isolated_double([&] {
    return probe_collective_time(c, CollectiveOp::kAllReduce, {{0, 8}}, S, true);
  });
  const double two = isolated_double([&] {
    return probe_collective_time(c, CollectiveOp::kAllReduce, {{0, 8}, {1, 9}}, S, true);
  });
  CHECK(two == Approx(2 * one).epsilon(0.01));
  c.network.nics_per_node = 8;  // rail NICs: no sharing
  const double rails = isolated_double([&] {
    return probe_collective_time(c, CollectiveOp::kAllReduce, {{0, 8}, {1, 9}}, S, true);
  });
  CHECK(rails == Approx(one).epsilon(0.01));
}
