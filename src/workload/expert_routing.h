// Which GPUs and nodes a token's top-k experts land on, under balanced routing (pure; no
// SimGrid). The flex (DeepEP) dispatcher sends a token once to every destination GPU in its
// node and once to every destination node over RDMA (lowering/flex_dispatch.h), so its traffic
// is set by the probability that a token's k experts hit a given set of experts.
//
// Balanced routing: a token's k experts are a uniformly random k-subset of the E experts; with
// group-limited routing (Megatron-Core moe_utils.py group_limited_topk: E split into G equal
// groups of consecutive experts; DeepSeek-V3's node-limited routing, n_group 8 / topk_group 4)
// they are a uniformly random k-subset of the experts of g groups, the g groups a uniformly
// random g-subset of the G. The expectations below are exact under that model.
#ifndef TRIDENT_WORKLOAD_EXPERT_ROUTING_H_
#define TRIDENT_WORKLOAD_EXPERT_ROUTING_H_

#include <vector>

#include "config/model.h"

namespace trident {

struct ExpertRouting {
  int experts = 0;     // E routed experts
  int topk = 1;        // k experts per token
  int groups = 0;      // G groups for group-limited routing; 0 or 1: no limit
  int group_topk = 0;  // g groups per token (used when 1 <= g < G)
};

// Returns the routing of `model`'s MoE layers (moe_router_num_groups / moe_router_group_topk).
ExpertRouting expert_routing(const ModelSpec& model);

// Returns the probability that a token's k experts include at least one of `unit` (distinct
// expert indices in [0, E)):
//   no groups: 1 - C(E - u, k) / C(E, k) (u = |unit|);
//   groups of s = E / G: 1 - sum over g-subsets S of the groups of
//     C(g s - o(S), k) / C(g s, k) / C(G, g), o(S) = the unit's experts inside S,
// summed by the number of chosen groups and their overlap with the unit (a small dynamic
// programme over the groups the unit touches). Requires k <= the experts of g groups.
double routing_hit_probability(const ExpertRouting& routing, const std::vector<int>& unit);

// Returns the expected number of distinct units a token's k experts fall on when the experts
// are laid out in `units` equal blocks of consecutive experts (EP ranks, or nodes of EP / c
// ranks each): units x the hit probability of each block, summed. Requires units to divide E.
double expected_distinct_units(const ExpertRouting& routing, int units);

// Returns the experts [first, first + count) as a unit for routing_hit_probability.
std::vector<int> expert_block(int first, int count);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_EXPERT_ROUTING_H_
