// All-to-all lowering (lowering/all_to_all) and its closed form (workload/all_to_all_time):
// flows per pair, the imbalanced dispatch and combine.
#include <catch2/catch.hpp>
#include <numeric>
#include <vector>

#include "lowering/all_to_all.h"
#include "test_support.h"
#include "workload/all_to_all_time.h"

using namespace trident;
using namespace trident::testing;

TEST_CASE("a uniform all-to-all is one phase with a flow per ordered pair", "[moe][a2a]") {
  const std::vector<std::vector<int>> groups = {{0, 1, 2, 3}, {4, 5, 6, 7}};
  const std::vector<Phase> phases = lower_all_to_all(groups, 8e6);
  REQUIRE(phases.size() == 1);
  CHECK(phases[0].flows.size() == 2 * 4 * 3);
  for (const Flow& f : phases[0].flows) {
    CHECK(f.src != f.dst);
    CHECK(f.src / 4 == f.dst / 4);  // inside its own group
    CHECK(f.bytes == 2e6);          // bytes / n to each peer; the own share stays local
  }
  CHECK(lower_all_to_all({{3}}, 1e6).empty());  // one member: nothing moves
}

TEST_CASE("an imbalanced dispatch sends the busiest member load x its share", "[moe][a2a]") {
  const int n = 4;
  const double B = 4e6;
  const auto m = imbalanced_all_to_all_bytes(n, B, 2.5, false);
  for (int i = 0; i < n; ++i) {
    // Every member sends B in all: 2.5 B / n to member 0, (n - 2.5) / (n - 1) B / n elsewhere.
    CHECK(std::accumulate(m[i].begin(), m[i].end(), 0.0) == Approx(B).epsilon(1e-15));
    CHECK(m[i][0] == 2.5 * B / n);
    CHECK(m[i][1] == Approx(0.5 * B / n).epsilon(1e-15));
  }
  // The combine is its transpose: member 0 sends the most.
  const auto c = imbalanced_all_to_all_bytes(n, B, 2.5, true);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) CHECK(c[i][j] == m[j][i]);
  }
  // Balanced: uniform; beyond n: capped at everything to member 0.
  CHECK(imbalanced_all_to_all_bytes(n, B, 1, false)[2][3] == B / n);
  CHECK(imbalanced_all_to_all_bytes(n, B, 9, false)[2][3] == 0);
}

TEST_CASE("all-to-all closed form: NVLink and NIC at once, the slower sets the time",
          "[moe][a2a]") {
  const ClusterSpec c = a100_cluster(4);  // 300 GB/s NVLink, 25 GB/s NICs, 2 / 5 us
  const double B = 64e6;
  // One island of 8: 7 / 8 of the buffer over NVLink.
  CHECK(all_to_all_time(8, 8, B, c) == Approx(2e-6 + 7 * B / 8 / 300e9).epsilon(1e-15));
  // 32 over 4 nodes: 7 / 32 over NVLink, 24 / 32 through the NIC, which is slower.
  CHECK(all_to_all_time(32, 8, B, c) == Approx(5e-6 + 24 * B / 32 / 25e9).epsilon(1e-15));
  // Bottleneck bandwidth: the NIC's bytes over the time.
  CHECK(all_to_all_bottleneck_bandwidth(32, 8, B, c) ==
        Approx(24 * B / 32 / (5e-6 + 24 * B / 32 / 25e9)).epsilon(1e-15));
  // Two GPUs behind each NIC halve its share.
  CHECK(all_to_all_time(32, 8, B, c, 2) == Approx(5e-6 + 24 * B / 32 / 12.5e9).epsilon(1e-15));
}
