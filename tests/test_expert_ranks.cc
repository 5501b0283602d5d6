// Megatron-Core's expert rank layout (layout/expert_ranks): the expert-parallel and
// expert-data-parallel groups folded over a stage's tensor, context and data-parallel ranks,
// and which actors meet in their collectives.
#include <catch2/catch.hpp>
#include <vector>

#include "layout/expert_ranks.h"
#include "test_support.h"

using namespace trident;
using namespace trident::testing;

namespace {

PlanSpec expert_plan(int t, int cp, int d, int ep, int etp) {
  PlanSpec p = plan(t, 2, d, 1, 4, ScheduleKind::k1F1B);
  p.context = cp;
  p.expert_parallel = ep;
  p.expert_tensor_parallel = etp;
  return p;
}

}  // namespace

TEST_CASE("with ETP = t expert groups are consecutive data-parallel ranks", "[moe][a2a]") {
  // t = 2, d = 4, p = 2 on 16 GPUs, tensor fastest: GPU = tp + 2 dp + 8 pp.
  const ClusterSpec c = a100_cluster(2);
  const PlanSpec p = expert_plan(2, 1, 4, 2, 2);
  const RankMap ranks(p, c);
  const ExpertRanks ex(ranks, p);
  CHECK(ex.expert_group(ex.local(1, 0, 3), 0) == std::vector<int>{5, 7});
  CHECK(ex.expert_data_group(ex.local(1, 0, 3), 0) == std::vector<int>{3, 7});
  CHECK(ex.expert_data_parallel() == 2);
  const PlanSpec p4 = expert_plan(2, 1, 4, 4, 2);
  const ExpertRanks ex4(ranks, p4);
  CHECK(ex4.expert_group(ex4.local(0, 0, 0), 1) == std::vector<int>{8, 10, 12, 14});
}

TEST_CASE("with ETP = 1 an expert group spans tensor and data-parallel ranks", "[moe][a2a]") {
  // Megatron-Core's expert order tp-ep-dp with tp = 1 over local ranks tp + 2 dp: EP = 4 takes
  // both tensor ranks of two replicas; EDP = t d / EP = 2 ranks four apart.
  const ClusterSpec c = a100_cluster(2);
  const PlanSpec p = expert_plan(2, 1, 4, 4, 1);
  const RankMap ranks(p, c);
  const ExpertRanks ex(ranks, p);
  CHECK(ex.expert_group(ex.local(1, 0, 1), 0) == std::vector<int>{0, 1, 2, 3});
  CHECK(ex.expert_group(ex.local(0, 0, 2), 1) == std::vector<int>{12, 13, 14, 15});
  CHECK(ex.expert_data_group(ex.local(1, 0, 0), 0) == std::vector<int>{1, 5});
  CHECK(ex.expert_data_parallel() == 2);
  // A TP-group actor (width t = 2): two actors per EP group; every other actor per EDP group.
  CHECK(ex.groups(ex.local(0, 0, 1), 2, 0, false) == std::vector<std::vector<int>>{{0, 1, 2, 3}});
  CHECK(ex.groups(ex.local(0, 0, 1), 2, 0, true) == std::vector<std::vector<int>>{{2, 6}, {3, 7}});
  CHECK(ex.join(ex.local(0, 0, 1), 2, false).participants == 2);
  CHECK(ex.join(ex.local(0, 0, 1), 2, false).id == ex.join(ex.local(0, 0, 0), 2, false).id);
  CHECK(ex.join(ex.local(0, 0, 2), 2, false).id != ex.join(ex.local(0, 0, 0), 2, false).id);
  CHECK(ex.join(ex.local(0, 0, 1), 2, true).participants == 2);
  CHECK(ex.join(ex.local(0, 0, 1), 2, true).id == ex.join(ex.local(0, 0, 3), 2, true).id);
  CHECK(ex.join(ex.local(0, 0, 1), 2, true).id != ex.join(ex.local(0, 0, 2), 2, true).id);
  // One GPU per actor: EP members, EDP members.
  CHECK(ex.join(ex.local(1, 0, 1), 1, false).participants == 4);
  CHECK(ex.join(ex.local(1, 0, 1), 1, true).participants == 2);
}

TEST_CASE("context-parallel ranks fold into the expert groups", "[moe][a2a][cp]") {
  // t = 1, cp = 2, d = 2 (local rank cp + 2 dp), EP = 4: one group of all four; EP = 2: the
  // two context ranks of a replica, whose gradients reduce with the other replica's.
  const ClusterSpec c = a100_cluster(1);
  const PlanSpec p = expert_plan(1, 2, 2, 4, 1);
  const RankMap ranks(p, c);
  const ExpertRanks ex(ranks, p);
  std::vector<int> all;
  for (int dp = 0; dp < 2; ++dp) {
    for (int cp = 0; cp < 2; ++cp) all.push_back(ranks.gpu(0, cp, dp, 0));
  }
  CHECK(ex.expert_group(ex.local(0, 1, 1), 0) == all);
  CHECK(ex.expert_data_parallel() == 1);
  const PlanSpec p2 = expert_plan(1, 2, 2, 2, 1);
  const ExpertRanks ex2(ranks, p2);
  CHECK(ex2.expert_group(ex2.local(0, 1, 1), 0) == std::vector<int>{all[2], all[3]});
  CHECK(ex2.expert_data_group(ex2.local(0, 1, 0), 0) == std::vector<int>{all[1], all[3]});
  CHECK(ex2.expert_data_parallel() == 2);
}
