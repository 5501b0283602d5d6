// Rank placement (schedule/rank_map): where tensor-, pipeline- and data-parallel ranks sit, and
// whether TP groups keep to one NVLink island.
#include <catch2/catch.hpp>

#include "schedule/rank_map.h"
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
