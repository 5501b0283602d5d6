// The fast-mode shortcuts for expert-parallel all-to-alls (decided here, recorded by
// decide_shortcuts): each member's traffic to other NVLink islands as one flow through its own
// NIC (engine/all_to_all.h lower_all_to_all_via_nics) instead of one flow per remote peer; for
// the flex dispatcher, its NVLink traffic also as one flow (engine/flex_dispatch.h).
#ifndef TRIDENT_SCHEDULE_ALL_TO_ALL_SHORTCUT_H_
#define TRIDENT_SCHEDULE_ALL_TO_ALL_SHORTCUT_H_

#include "config/scenario.h"
#include "schedule/shortcuts.h"

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
// (engine/flex_dispatch.h lower_flex_dispatch_collapsed: one RDMA flow through each member's
// NIC, one NVLink flow to its island neighbour), and why: taken in fast mode when the model's
// MoE layers run the flex dispatcher over expert groups of more than one member, on a fabric
// without taper above the NICs, and without sharded gradients.
Shortcut decide_collapsed_flex(const Scenario& scenario, Fidelity fidelity);

}  // namespace trident

#endif  // TRIDENT_SCHEDULE_ALL_TO_ALL_SHORTCUT_H_
