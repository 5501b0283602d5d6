// Plans on part of each NVLink island (plan.gpus_per_island; layout/rank_map, config/checks):
// 128 GPUs of GB200 NVL72 as two racks of 64, the way block-topology schedulers allocate them.
#include <catch2/catch.hpp>

#include "config/checks.h"
#include "layout/rank_map.h"
#include "test_support.h"

using namespace trident;
using namespace trident::testing;

namespace {

ClusterSpec nvl72(int racks) {
  ClusterSpec c = a100_cluster(18 * racks);
  c.gpus_per_node = 4;
  c.nvlink.island_size = 72;
  c.network.nics_per_node = 4;
  return c;
}

}  // namespace

TEST_CASE("128 GPUs on two NVL72 racks: ranks fill the first 64 GPUs of each", "[rank_map]") {
  const ClusterSpec c = nvl72(2);
  PlanSpec p = plan(8, 4, 4, 1, 8, ScheduleKind::k1F1B);
  p.placement = {ParallelDim::kTensor, ParallelDim::kPipeline, ParallelDim::kData};
  p.gpus_per_island = 64;
  CHECK(usable_gpus(p, c) == 128);
  const RankMap ranks(p, c);
  // Rank 64 (data replica 2) is the first GPU of the second rack, GPU 72.
  CHECK(ranks.gpu(0, 2, 0) == 72);
  CHECK(ranks.gpu(7, 3, 3) == 72 + 63);
  CHECK(ranks.gpus_spanned() == 136);
  // Two replicas per rack: the data-parallel group spans both racks, two members in each.
  CHECK(ranks.data_group(0, 0) == std::vector<int>{0, 32, 72, 104});
  CHECK(ranks.tensor_groups_in_islands());
  // 0: every GPU, rank r on GPU r.
  p.gpus_per_island = 0;
  CHECK(RankMap(p, c).gpu(0, 2, 0) == 64);
  CHECK(usable_gpus(p, c) == 144);
}

TEST_CASE("a last, partial rack gives its first GPUs", "[rank_map]") {
  ClusterSpec c = nvl72(1);
  c.nodes = 20;  // 18 trays of one rack and 2 of the next: 80 GPUs
  PlanSpec p = plan(8, 1, 9, 1, 9, ScheduleKind::k1F1B);
  p.gpus_per_island = 64;
  CHECK(usable_gpus(p, c) == 64 + 8);
  p.gpus_per_island = 4;
  CHECK(usable_gpus(p, c) == 8);
}
