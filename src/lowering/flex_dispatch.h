// Lowering of the flex token dispatcher (Megatron-Core MoEFlexTokenDispatcher with DeepEP's
// normal kernels: megatron/core/transformer/moe/token_dispatcher.py, fused_a2a.py;
// deepseek-ai/DeepEP csrc/kernels/internode.cu, intranode.cu) onto flows (pure, no SimGrid).
//
// DeepEP sends a token ONCE to each destination GPU, not once per routed expert as the
// alltoall dispatcher's permuted copies are. Inside an NVLink island a source GPU writes the
// token straight into each destination GPU's buffer. Towards another island it sends the
// token ONCE over RDMA, to the GPU of the same local index there (NIC to NIC), which forwards
// it over NVLink to the destination GPUs of its island; the kernels pipeline both in chunks,
// so both kinds of flow run at once, in one phase. The combine is the reverse: the outputs
// reduce inside the island onto the forwarder, which sends one RDMA transfer per token back.
//
// Per token of a source, with p_j the chance its k experts hit member j's E / n experts and
// P_I the chance they hit island I's (expert_routing.h): an RDMA flow of P_I x token bytes to
// the forwarder in each other island, and an NVLink flow of p_j x token bytes to each other
// member j of its island, plus the forwarder's p_j x token bytes to j for each source it
// forwards for. Routing imbalance as the alltoall path applies it
// (imbalanced_all_to_all_bytes): member 0 hosts the busiest experts, the traffic bound to it
// scaled by `load` and the rest by (n - load) / (n - 1), each chance capped at 1.
#ifndef TRIDENT_LOWERING_FLEX_DISPATCH_H_
#define TRIDENT_LOWERING_FLEX_DISPATCH_H_

#include <functional>
#include <vector>

#include "lowering/collective_lowering.h"
#include "workload/expert_routing.h"

namespace trident {

// One flex group's members by NVLink island. Member m of the group holds the experts
// [m E / n, (m + 1) E / n), as Megatron-Core places them over the EP ranks.
struct FlexLayout {
  std::vector<int> island;                // per member: its island's index among the group's
  std::vector<int> local;                 // per member: its index among its island's members
  std::vector<std::vector<int>> members;  // per island: its members, in group order
  std::vector<double> gpu_hit;            // per member: p_j, balanced
  std::vector<double> island_hit;         // per island: P_I, balanced
};

// Returns the layout of `group` (GPU ids) under `routing`; `island_of` maps a GPU to its
// NVLink island. Requires routing.experts divisible by the group's size.
FlexLayout flex_layout(const std::vector<int>& group, const ExpertRouting& routing,
                       const std::function<int(int)>& island_of);

// Returns the phase of a flex dispatch (or, `combine`, its combine) over every group of
// `groups` at once, each member holding token_bytes of tokens (T / t tokens x hidden x element
// bytes), with the busiest member's load `load` (1: balanced). Flows between the same pair
// are merged. Requires groups of one size.
std::vector<Phase> lower_flex_dispatch(const std::vector<std::vector<int>>& groups,
                                       double token_bytes, const ExpertRouting& routing,
                                       double load, bool combine,
                                       const std::function<int(int)>& island_of);

// Returns the phase of lower_flex_dispatch with every member's flows collapsed (the fast-mode
// shortcut collapsed_flex, lowering/all_to_all_shortcut.h): its RDMA traffic as one flow out
// through its own NIC and back (the platform's loopback route) carrying the larger of what it
// sends to and receives from other islands, and its NVLink traffic as one flow to the next
// member of its island (in group order, the last to the first) carrying the larger of what it
// sends and what that member receives inside the island. Every NIC and NVLink port then
// carries one flow of its busier direction's bytes: without competing traffic the phase ends
// with the busiest port, as the per-pair flows do when each port's flows end together
// (balanced routing); under contention a port carries one flex flow instead of one per peer.
// 2n flows per group of n members (128 at EP 64 over 8 nodes instead of 896).
std::vector<Phase> lower_flex_dispatch_collapsed(const std::vector<std::vector<int>>& groups,
                                                 double token_bytes, const ExpertRouting& routing,
                                                 double load, bool combine,
                                                 const std::function<int(int)>& island_of);

// The bytes DeepEP's tests divide by the kernel's time for its "bottleneck bandwidth"
// (deepseek-ai/DeepEP tests/legacy/test_internode.py, test_intranode.py), per GPU, balanced:
// rdma, the tokens sent to each destination node, its own node included (num_rdma_token_sent
// x hidden); nvlink, the tokens each GPU receives, its own included (recv_x). Averaged over
// the group's members.
struct DeepEpBytes {
  double rdma = 0;
  double nvlink = 0;
};
DeepEpBytes deepep_bytes(const std::vector<int>& group, double token_bytes,
                         const ExpertRouting& routing, const std::function<int(int)>& island_of);

}  // namespace trident

#endif  // TRIDENT_LOWERING_FLEX_DISPATCH_H_
