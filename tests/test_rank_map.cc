// Rank placement (layout/rank_map): where tensor-, pipeline- and data-parallel ranks sit, and
// whether TP groups keep to one NVLink island.
#include <catch2/catch.hpp>

#include "layout/rank_map.h"
#include "test_support.h"

using namespace trident;
using namespace trident::testing;

TEST_CASE("placement decides whether TP groups sit in one island", "[schedule]") {
  const ClusterSpec c = a100_cluster(4);
  PlanSpec pl = plan(8, 2, 2, 1, 4, ScheduleKind::k1F1B);
  RankMap intra(pl, c);
  CHECK(intra.tensor_group(1, 1) == std::vector<int>{24, 25, 26, 27, 28, 29, 30, 31});
  CHECK(intra.tensor_groups_in_islands());
  CHECK(intra.tensor_traffic_isolated());
  CHECK(intra.data_group(0, 0) == std::vector<int>{0, 8});
  pl.placement = {ParallelDim::kData, ParallelDim::kPipeline, ParallelDim::kTensor};
  RankMap inter(pl, c);
  CHECK(inter.tensor_group(0, 0) == std::vector<int>{0, 4, 8, 12, 16, 20, 24, 28});
  CHECK_FALSE(inter.tensor_groups_in_islands());
  // Pipeline neighbours in the same island share NVLink links with TP traffic.
  PlanSpec small = plan(2, 2, 1, 1, 4, ScheduleKind::k1F1B);
  RankMap shared(small, c);
  CHECK(shared.tensor_groups_in_islands());
  CHECK_FALSE(shared.tensor_traffic_isolated());
}

TEST_CASE("replicas that fill their islands stand for the others", "[schedule]") {
  const ClusterSpec c = a100_cluster(8);  // 8 islands of 8 GPUs, a NIC per GPU
  // t = 4: replicas 0 and 1 share each node, so a data-parallel group has two members per
  // island; replicas 0..1 hold both of them in every island they use.
  PlanSpec two = plan(4, 2, 8, 1, 4, ScheduleKind::k1F1B);
  CHECK_FALSE(RankMap(two, c).data_groups_one_per_island());
  CHECK(RankMap(two, c).replicas_filling_islands() == 2);
  // t = 2: four members per island.
  CHECK(RankMap(plan(2, 2, 16, 1, 4, ScheduleKind::k1F1B), c).replicas_filling_islands() == 4);
  // One member per island, or the whole group in one island: nothing to fill.
  CHECK(RankMap(plan(8, 2, 4, 1, 4, ScheduleKind::k1F1B), c).replicas_filling_islands() == 0);
  CHECK(RankMap(plan(1, 8, 8, 1, 8, ScheduleKind::k1F1B), c).replicas_filling_islands() == 0);
  // Two NICs per node: the replicas that fill a node also hold every user of its NICs.
  ClusterSpec shared = c;
  shared.network.nics_per_node = 2;
  CHECK(RankMap(two, shared).replicas_filling_islands() == 2);
  CHECK(RankMap(plan(2, 2, 16, 1, 4, ScheduleKind::k1F1B), shared).replicas_filling_islands() == 4);
}

TEST_CASE("TP groups that span whole islands fill them", "[schedule]") {
  const ClusterSpec c = a100_cluster(8);
  CHECK(RankMap(plan(16, 2, 2, 1, 4, ScheduleKind::k1F1B), c).tensor_groups_fill_islands());
  CHECK_FALSE(RankMap(plan(8, 2, 4, 1, 4, ScheduleKind::k1F1B), c).tensor_groups_fill_islands());
  // Strided across nodes: two members in each of four islands, which other groups share.
  PlanSpec strided = plan(8, 2, 4, 1, 4, ScheduleKind::k1F1B);
  strided.placement = {ParallelDim::kData, ParallelDim::kTensor, ParallelDim::kPipeline};
  CHECK_FALSE(RankMap(strided, c).tensor_groups_fill_islands());
}
