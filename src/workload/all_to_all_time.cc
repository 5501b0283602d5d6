#include "workload/all_to_all_time.h"

#include <algorithm>

namespace trident {

double all_to_all_time(int n, int per_island, double bytes, const ClusterSpec& c,
                       int gpus_per_nic) {
  const double share = bytes / n;
  double t = 0;
  if (per_island > 1) {
    const double bw = c.nvlink.bandwidth * c.nvlink.protocol_efficiency;
    t = std::max(t, c.nvlink.latency + (per_island - 1) * share / bw);
  }
  if (n > per_island) {
    const double bw = c.network.nic_bandwidth * c.network.protocol_efficiency / gpus_per_nic;
    t = std::max(t, c.network.latency + (n - per_island) * share / bw);
  }
  return t;
}

double all_to_all_bottleneck_bandwidth(int n, int per_island, double bytes, const ClusterSpec& c,
                                       int gpus_per_nic) {
  const double time = all_to_all_time(n, per_island, bytes, c, gpus_per_nic);
  if (time <= 0) return 0;
  const int peers = n > per_island ? n - per_island : per_island - 1;
  return peers * (bytes / n) / time;
}

}  // namespace trident
