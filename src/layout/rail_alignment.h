// Whether a plan's cross-island traffic stays on its rails (rail-optimized fabrics).
#ifndef TRIDENT_LAYOUT_RAIL_ALIGNMENT_H_
#define TRIDENT_LAYOUT_RAIL_ALIGNMENT_H_

#include "config/cluster.h"
#include "layout/rank_map.h"

namespace trident {

// True unless `cluster` is a rail-optimized fabric with PXN and some transfer between islands
// would join two rails: the k-th members of the islands of a data-parallel group (with or
// without context ranks: the inter-island rings of a hierarchical collective), or pipeline
// neighbours and context-parallel ring neighbours in different islands, on different local GPU
// indices. When true no transfer takes PXN's NVLink hop or another TP rank's NIC, so the
// engine's shortcuts that assume TP ranks' links carry their own traffic only stay exact.
// Requires a RankMap of the cluster's plan.
bool transfers_stay_on_rails(const ClusterSpec& cluster, const RankMap& ranks);

}  // namespace trident

#endif  // TRIDENT_LAYOUT_RAIL_ALIGNMENT_H_
