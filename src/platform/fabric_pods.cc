#include "platform/fabric_pods.h"

#include <algorithm>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u/Link.hpp>
#include <string>
#include <vector>

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
    const std::string name = "pod" + std::to_string(pod);
    // SimGrid climbs from a GPU to a gateway one zone at a time: the pod's gateway sits in a
    // zone of its own beside the leaf groups (a router of the pod itself is not reachable).
    sg4::NetZone* core = sg4::create_star_zone(name + "_core");
    core->set_parent(zone);
    auto* gw = core->create_router(name + "_gw");
    core->add_route(gw, nullptr, nullptr, nullptr, {}, false);
    core->add_route(nullptr, gw, nullptr, nullptr, {}, false);
    core->seal();
    zone->add_route(core->get_netpoint(), nullptr, gw, nullptr, {}, false);
    zone->add_route(nullptr, core->get_netpoint(), nullptr, gw, {}, false);
    const int first = pod * nodes_per_pod_;
    const int pod_nodes = std::min(nodes_per_pod_, nodes_ - first);
    const double bw = pod_nodes * node_uplink_;
    sg4::NetZone* parent = sites_->zone_of(first);
    sg4::Link* up = parent->create_link(name + "_up", bw)->set_latency(0)->seal();
    sg4::Link* down = parent->create_link(name + "_down", bw)->set_latency(0)->seal();
    zone->seal();
    parent->add_route(zone->get_netpoint(), nullptr, gw, nullptr,
                      std::vector<sg4::LinkInRoute>{sg4::LinkInRoute(up)}, false);
    parent->add_route(nullptr, zone->get_netpoint(), nullptr, gw,
                      std::vector<sg4::LinkInRoute>{sg4::LinkInRoute(down)}, false);
  }
}

}  // namespace trident
