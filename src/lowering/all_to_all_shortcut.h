// The fast-mode shortcuts for expert-parallel all-to-alls (decided here, recorded by
// decide_shortcuts): each member's traffic to other NVLink islands as one flow through its own
// NIC (lowering/all_to_all.h lower_all_to_all_via_nics) instead of one flow per remote peer; for
// the flex dispatcher, its NVLink traffic also as one flow (lowering/flex_dispatch.h).
#ifndef TRIDENT_LOWERING_ALL_TO_ALL_SHORTCUT_H_
#define TRIDENT_LOWERING_ALL_TO_ALL_SHORTCUT_H_

#include <string>

#include "config/scenario.h"
#include "layout/rank_map.h"
#include "lowering/shortcuts.h"

namespace trident {

// Members with fewer peers in other islands keep one flow per pair: the collapse saves little
// there, and a NIC shared with other traffic splits its bandwidth by flow count (max-min), so
// one collapsed flow competes less than its per-pair flows would.
inline constexpr int kNicAllToAllPeers = 8;

// Returns whether a step of `scenario` at `fidelity` collapses the all-to-alls' cross-island
// flows per NIC, and why: taken in fast mode when the model's MoE layers run all-to-alls over
// expert groups whose every member has at least kNicAllToAllPeers peers in other islands, on a
// fabric without taper above the NICs (the per-pair flows' only shared links are then the two
// NICs, which the collapsed flow loads alike), and without sharded gradients (whose buckets
// and gathers meet the all-to-alls on the NICs in every pass).
Shortcut decide_nic_all_to_all(const Scenario& scenario, Fidelity fidelity);

// Returns whether a step of `scenario` at `fidelity` lowers its flex dispatches collapsed
// (lowering/flex_dispatch.h lower_flex_dispatch_collapsed: one RDMA flow through each member's
// NIC, one NVLink flow to its island neighbour), and why: taken in fast mode when the model's
// MoE layers run the flex dispatcher over expert groups of more than one member, on a fabric
// without taper above the NICs, and without sharded gradients.
Shortcut decide_collapsed_flex(const Scenario& scenario, Fidelity fidelity);

// Returns how many data-parallel replicas (0..R-1) stand for all d in a fast step whose expert
// all-to-alls are collapsed (`collapsed`: nic_all_to_all or collapsed_flex taken), or 0, with
// why in *reason: R = ranks.replicas_filling_islands() (whole islands, no NIC shared with the
// others), when every expert group has the same number of members in each island it spans, the
// routing is balanced (every member sends and receives alike) and the expert-data-parallel
// group is one GPU. Then every member's collapsed flows (out through its own NIC and back, to
// its island neighbour) are the same in every island, and the simulated islands' flows time
// every island's (the one_replica shortcut generalized to expert groups).
int expert_group_replicas(const Scenario& scenario, const RankMap& ranks, bool collapsed,
                          std::string* reason);

}  // namespace trident

#endif  // TRIDENT_LOWERING_ALL_TO_ALL_SHORTCUT_H_
