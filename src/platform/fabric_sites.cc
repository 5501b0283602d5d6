#include "platform/fabric_sites.h"

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u/Link.hpp>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace trident {

SiteTier::SiteTier(sg4::NetZone* root, const ClusterSpec& c)
    : root_(root), sites_(c.sites), nodes_(c.nodes) {}

sg4::NetZone* SiteTier::zone_of(int node) {
  if (sites_.count <= 1) return root_;
  const int site = sites_.site_of_node(node, nodes_);
  sg4::NetZone*& zone = zones_[site];
  if (zone == nullptr) {
    zone = sg4::create_star_zone("site" + std::to_string(site));
    zone->set_parent(root_);
  }
  return zone;
}

void SiteTier::seal() {
  for (auto& [site, zone] : zones_) {
    seal_below(root_, zone, "site" + std::to_string(site), "edge", "_wan", sites_.wan_bandwidth,
               sites_.wan_latency / 2);
  }
}

void seal_below(sg4::NetZone* parent, sg4::NetZone* zone, const std::string& name,
                const char* gateway_zone, const char* link, double bandwidth, double latency) {
  sg4::NetZone* edge = sg4::create_star_zone(name + "_" + gateway_zone);
  edge->set_parent(zone);
  auto* gw = edge->create_router(name + "_gw");
  edge->add_route(gw, nullptr, nullptr, nullptr, {}, false);
  edge->add_route(nullptr, gw, nullptr, nullptr, {}, false);
  edge->seal();
  zone->add_route(edge->get_netpoint(), nullptr, gw, nullptr, {}, false);
  zone->add_route(nullptr, edge->get_netpoint(), nullptr, gw, {}, false);
  const std::string ln = name + link;
  sg4::Link* up = parent->create_link(ln + "_up", bandwidth)->set_latency(latency)->seal();
  sg4::Link* down = parent->create_link(ln + "_down", bandwidth)->set_latency(latency)->seal();
  zone->seal();
  parent->add_route(zone->get_netpoint(), nullptr, gw, nullptr,
                    std::vector<sg4::LinkInRoute>{sg4::LinkInRoute(up)}, false);
  parent->add_route(nullptr, zone->get_netpoint(), nullptr, gw,
                    std::vector<sg4::LinkInRoute>{sg4::LinkInRoute(down)}, false);
}

}  // namespace trident
