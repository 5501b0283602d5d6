// Closed-form time of an all-to-all with no competing traffic (pure; no SimGrid). It is what
// the lowered all-to-all (lowering/all_to_all.h) takes when every GPU of the group runs one at
// once on a network without taper: each GPU's NVLink link carries its messages to the peers
// of its island, its NIC those to peers elsewhere, both at once.
#ifndef TRIDENT_WORKLOAD_ALL_TO_ALL_TIME_H_
#define TRIDENT_WORKLOAD_ALL_TO_ALL_TIME_H_

#include "config/cluster.h"

namespace trident {

// Returns the time of an all-to-all over `n` GPUs in which each sends bytes / n to every other
// member (`bytes` per GPU, its own share included), `per_island` members sharing each NVLink
// island, and `gpus_per_nic` GPUs running one at once behind each NIC:
//   max(nvlink.latency + (c - 1) B / n / (nvlink bw x eff),
//       network.latency + (n - c) B / n / (NIC bw x eff / gpus_per_nic))
// with a term only where it has peers (c = per_island). Requires 1 <= per_island <= n, n a
// multiple of per_island.
double all_to_all_time(int n, int per_island, double bytes, const ClusterSpec& cluster,
                       int gpus_per_nic = 1);

// Returns the "bottleneck bandwidth" DeepEP reports for such an all-to-all: the bytes each GPU
// sends over its busiest kind of link (NVLink when all members share an island, else the
// NIC) divided by the time.
double all_to_all_bottleneck_bandwidth(int n, int per_island, double bytes,
                                       const ClusterSpec& cluster, int gpus_per_nic = 1);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_ALL_TO_ALL_TIME_H_
