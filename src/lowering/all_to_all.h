// Lowering of all-to-alls onto point-to-point flows (pure, no SimGrid).
//
// NCCL has no all-to-all kernel of its own: torch.distributed.all_to_all_single, which
// Megatron-Core's MoEAlltoAllTokenDispatcher calls, posts one ncclSend and one ncclRecv per
// peer inside ncclGroupStart/End, and NCCL runs all of them at once (NVIDIA/nccl
// src/enqueue.cc, p2p tasks). So an all-to-all is one phase holding one flow per ordered pair
// of distinct members, over NVLink inside an island and through the two GPUs' NICs across
// islands, sharing links with whatever else runs. (DeepEP's internode kernels instead send a
// token once per node over RDMA, to the GPU of the same local index, which forwards it over
// NVLink; with top-k routing that deduplicates the copies bound to one node. Not modelled:
// trident moves each routed copy.)
#ifndef TRIDENT_LOWERING_ALL_TO_ALL_H_
#define TRIDENT_LOWERING_ALL_TO_ALL_H_

#include <functional>
#include <vector>

#include "layout/rank_map.h"
#include "lowering/collective_lowering.h"

namespace trident {

// Returns the phases of a uniform all-to-all over every group in `groups` at once: each member
// sends bytes_per_gpu / n to each other member of its group (n = group size; its own share
// stays local). The entry point of `trident collective --op all-to-all`. Requires groups of
// one size >= 1.
std::vector<Phase> lower_all_to_all(const std::vector<std::vector<int>>& groups,
                                    double bytes_per_gpu);

// Returns the phases of an all-to-all where member i of every group sends bytes[i][j] to
// member j (the same n x n matrix for each group; the diagonal stays local). Requires
// bytes.size() == n == every group's size.
std::vector<Phase> lower_all_to_all(const std::vector<std::vector<int>>& groups,
                                    const std::vector<std::vector<double>>& bytes);

// Returns the phases of the all-to-all `bytes` (as above) with each member's traffic across
// islands collapsed into one flow out through its own NIC and back (the platform's loopback
// route), carrying the larger of what it sends to and receives from other islands, and its
// traffic inside its island into one NVLink flow to the next member there
// (add_island_rings). Without competing traffic on a non-blocking fabric it takes the
// per-pair lowering's time when each port's per-pair flows end together: every NIC and
// NVLink port carries one flow of its busier direction's bytes and the busiest one sets the
// end (the closed form's bound). Under contention each port's load is one flow instead of
// one per peer. 2n flows per group of n members instead of n(n - 1): DeepSeek-V3's EP 64
// over 8 nodes moves 128 instead of 4032. `island_of` maps a GPU to its NVLink island.
std::vector<Phase> lower_all_to_all_via_nics(const std::vector<std::vector<int>>& groups,
                                             const std::vector<std::vector<double>>& bytes,
                                             const std::function<int(int)>& island_of);

// Appends, for each NVLink island holding c > 1 members of group `g` (members in group order
// m_0 .. m_{c-1}), the flows m_k -> m_{k+1 mod c} carrying max(out[m_k], in[m_{k+1}]): what
// each member sends to, and receives from, the others of its island, one flow per port.
void add_island_rings(const std::vector<int>& g, const std::vector<double>& out,
                      const std::vector<double>& in, const std::function<int(int)>& island_of,
                      Phase* phase);

// Removes from `phases` the flows whose source GPU is not simulated (simulated[gpu] == 0); the
// phases (their latency) stay. Requires every kept flow's destination simulated too: collapsed
// all-to-alls (lower_all_to_all_via_nics, flex_dispatch.h lower_flex_dispatch_collapsed) of
// groups whose simulated members fill their islands, where every flow loops back through its
// source's NIC or stays in its source's island.
void keep_simulated_flows(std::vector<Phase>* phases, const std::vector<char>& simulated);

// Returns the n x n byte matrix of a MoE dispatch (or, `combine`, its combine) with one busy
// member: every member sends bytes_per_gpu in all, bytes_per_gpu / n x `load` of it to member
// 0 (which hosts the busiest experts) and the rest evenly to the others; the combine is the
// transpose. `load` is capped at n (everything to member 0); 1: uniform.
std::vector<std::vector<double>> imbalanced_all_to_all_bytes(int n, double bytes_per_gpu,
                                                             double load, bool combine);

}  // namespace trident

#endif  // TRIDENT_LOWERING_ALL_TO_ALL_H_
