// Collective lowering (engine/collective_lowering, no SimGrid): rings, hierarchical
// all-reduces across islands, and mirrored ring edges, as phases of flows.
#include <catch2/catch.hpp>

#include "engine/collective_lowering.h"

using namespace trident;

TEST_CASE("ring all-reduce lowers to 2(n-1) steps of S/n per GPU", "[lowering]") {
  const auto island = [](int gpu) { return gpu / 8; };
  LoweringOptions every_step;
  every_step.collapse_steps = false;
  const auto phases =
      lower_collective(CollectiveOp::kAllReduce, {{0, 1, 2, 3}}, 400, island, every_step);
  REQUIRE(phases.size() == 6);
  for (const Phase& ph : phases) {
    REQUIRE(ph.flows.size() == 4);
    CHECK(ph.flows[0].bytes == 100);
    CHECK(ph.flows[3].src == 3);
    CHECK(ph.flows[3].dst == 0);
  }
  const auto collapsed =
      lower_collective(CollectiveOp::kAllReduce, {{0, 1, 2, 3}}, 400, island, {});
  REQUIRE(collapsed.size() == 1);
  CHECK(collapsed[0].steps == 6);
  CHECK(collapsed[0].flows[0].bytes == 600);
}

TEST_CASE("a group spanning islands with several members each goes hierarchical", "[lowering]") {
  const auto island = [](int gpu) { return gpu / 8; };
  // 2 islands x 2 members: reduce-scatter inside (1 step), ring across (2 steps), all-gather.
  const auto phases = lower_collective(CollectiveOp::kAllReduce, {{0, 1, 8, 9}}, 400, island, {});
  REQUIRE(phases.size() == 3);
  CHECK(phases[0].flows.size() == 4);  // two intra-island rings of 2
  CHECK(phases[0].flows[0].bytes == 200);
  CHECK(phases[1].flows[0].src == 0);
  CHECK(phases[1].flows[0].dst == 8);
  CHECK(phases[1].flows[0].bytes == 2 * 100);  // 2 steps of S/(c k) collapsed
  // One member per island: a flat ring.
  CHECK(lower_collective(CollectiveOp::kAllReduce, {{0, 8, 16}}, 300, island, {}).size() == 1);
}

TEST_CASE("a mirrored ring edge carries one edge's collapsed bytes", "[lowering]") {
  const auto phases = lower_mirrored_ring(CollectiveOp::kAllReduce, 24, 8, 800);
  REQUIRE(phases.size() == 1);
  CHECK(phases[0].steps == 14);
  CHECK(phases[0].flows[0].src == 24);
  CHECK(phases[0].flows[0].dst == 24);
  CHECK(phases[0].flows[0].bytes == 1400);
  CHECK(lower_mirrored_ring(CollectiveOp::kReduceScatter, 0, 8, 800)[0].steps == 7);
}
