#include "platform/fabric_pods.h"

#include <algorithm>
#include <string>

namespace sg4 = simgrid::s4u;

namespace trident {

PodTier::PodTier(SiteTier* sites, const NetworkSpec& net, int nodes)
    : sites_(sites),
      nodes_(nodes),
      nodes_per_pod_(net.tiers == 3 ? net.nodes_per_pod : 0),
      node_uplink_(net.nics_per_node * net.nic_bandwidth / net.oversubscription /
                   net.pod_oversubscription) {}

sg4::NetZone* PodTier::parent_of(int first_node) {
  if (nodes_per_pod_ <= 0) return sites_->zone_of(first_node);
  const int pod = first_node / nodes_per_pod_;
  sg4::NetZone*& zone = pods_[pod];
  if (zone == nullptr) {
    zone = sg4::create_star_zone("pod" + std::to_string(pod));
    zone->set_parent(sites_->zone_of(pod * nodes_per_pod_));
  }
  return zone;
}

void PodTier::seal() {
  for (auto& [pod, zone] : pods_) {
    const int first = pod * nodes_per_pod_;
    const int pod_nodes = std::min(nodes_per_pod_, nodes_ - first);
    seal_below(sites_->zone_of(first), zone, "pod" + std::to_string(pod), "core", "",
               pod_nodes * node_uplink_, 0);
  }
}

}  // namespace trident
