// The rail-optimized fabric (docs/fabrics.md), as NVIDIA's DGX SuperPOD reference architectures
// build it and NCCL routes over it: NIC i of every node hangs off rail switch i of its group
// of `nodes_per_leaf` nodes (a scalable unit), and a spine joins the groups' rail switches.
//
//   root (star: the spine) ── rail zones (group g, rail r): one up and one down link each, the
//   │                          capacity of the group's NICs on that rail / oversubscription
//   │                          └── NIC hosts nic{node}_{r}: nic_up / nic_down to the rail switch
//   └── GPU hosts and their NVLink links (bypass routes inside each island)
//
// A GPU's network traffic leaves through its own NIC's host; a transfer to a GPU of the same
// rail crosses one rail switch inside a group, the spine between groups. With PXN (NCCL's
// "PCI x NVLink", src/transport/net.cc and src/graph/paths.cc in NVIDIA/nccl: the proxy on the
// GPU that shares the destination's rail sends, after an NVLink copy) a transfer to another
// rail runs as two pipelined legs: NVLink to the node-mate on the receiver's rail, then that
// node-mate's NIC to the receiver's. Without PXN it crosses the spine: rail zone to rail zone.
#include <algorithm>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <string>

#include "platform/fabric_sites.h"
#include "platform/platform.h"

namespace sg4 = simgrid::s4u;

namespace trident {
namespace {

sg4::Link* rail_link(sg4::NetZone* zone, const std::string& name, double bw, double latency) {
  return zone->create_link(name, bw)->set_latency(latency)->seal();
}

std::vector<sg4::LinkInRoute> route_of(std::initializer_list<sg4::Link*> links) {
  std::vector<sg4::LinkInRoute> out;
  for (sg4::Link* l : links) out.emplace_back(l);
  return out;
}

}  // namespace

void Platform::build_rail(const ClusterSpec& c, double host_speed, int gpus_used,
                          const std::vector<char>& islands_needed) {
  const int gpn = c.gpus_per_node;
  const int islands = (gpus_used + island_size_ - 1) / island_size_;
  const int built = islands * island_size_;
  const int nodes = (built + gpn - 1) / gpn;
  const double nvl_lat = c.nvlink.latency / 2, net_lat = c.network.latency / 2;
  const auto needed = [&](int isl) {
    return islands_needed.empty() || islands_needed[static_cast<size_t>(isl)] != 0;
  };
  sg4::NetZone* root = sg4::create_star_zone(c.sites.count > 1 ? "wan" : "fabric");
  SiteTier sites(root, c);  // rail zones below their site (fabric_sites.h)
  // GPUs and NVLink: hosts of the root, reached only through bypass routes inside an island.
  hosts_.assign(static_cast<size_t>(nodes) * gpn, nullptr);
  for (int isl = 0; isl < islands; ++isl) {
    if (!needed(isl)) continue;
    std::vector<sg4::Link*> up, down;
    for (int k = 0; k < island_size_; ++k) {
      const std::string name = std::to_string(isl * island_size_ + k);
      hosts_[isl * island_size_ + k] = root->create_host("gpu" + name, host_speed)->seal();
      up.push_back(rail_link(root, "nvl" + name + "_up", c.nvlink.bandwidth, nvl_lat));
      down.push_back(rail_link(root, "nvl" + name + "_down", c.nvlink.bandwidth, nvl_lat));
    }
    for (int a = 0; a < island_size_; ++a) {
      for (int b = 0; b < island_size_; ++b) {
        if (a == b) continue;
        root->add_bypass_route(hosts_[isl * island_size_ + a]->get_netpoint(),
                               hosts_[isl * island_size_ + b]->get_netpoint(), nullptr, nullptr,
                               route_of({up[a], down[b]}));
      }
    }
  }
  // NICs: one per GPU slot (nics_per_node == gpus_per_node), in their rail zone.
  nic_hosts_.assign(hosts_.size(), nullptr);
  // Groups of nodes_per_leaf nodes, each inside one site (cluster.sites).
  const int per_group = std::max(1, c.network.nodes_per_leaf);
  const int site_nodes = c.sites.count > 1 ? c.nodes / c.sites.count : nodes;
  std::vector<std::pair<int, int>> groups;  // [first node, last node) of each group
  for (int site_first = 0; site_first < nodes; site_first += site_nodes) {
    const int site_last = std::min(nodes, site_first + site_nodes);
    for (int first = site_first; first < site_last; first += per_group) {
      groups.emplace_back(first, std::min(site_last, first + per_group));
    }
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    const auto [first, last] = groups[g];
    std::vector<int> used;  // nodes of the group with a GPU built
    for (int node = first; node < last; ++node) {
      bool any = false;
      for (int k = 0; k < gpn && !any; ++k) any = hosts_[node * gpn + k] != nullptr;
      if (any) used.push_back(node);
    }
    if (used.empty()) continue;
    // The rail switch's uplinks: its group's NICs on that rail, over the taper.
    // cluster.stragglers.background_traffic takes its share of the NICs and rail uplinks.
    const double nic_bw = c.network.nic_bandwidth * (1 - c.stragglers.background_traffic);
    const double uplink = (last - first) * nic_bw / c.network.oversubscription;
    for (int r = 0; r < gpn; ++r) {
      const std::string zn = "rail" + std::to_string(g) + "_" + std::to_string(r);
      sg4::NetZone* parent = sites.zone_of(first);
      sg4::NetZone* zone = sg4::create_star_zone(zn);
      zone->set_parent(parent);
      for (int node : used) {
        const std::string nm = "nic" + std::to_string(node) + "_" + std::to_string(r);
        sg4::Host* h = zone->create_host(nm, host_speed)->seal();
        sg4::Link* nu = rail_link(zone, nm + "_up", nic_bw, net_lat);
        sg4::Link* nd = rail_link(zone, nm + "_down", nic_bw, net_lat);
        zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr, route_of({nu}), false);
        zone->add_route(nullptr, h->get_netpoint(), nullptr, nullptr, route_of({nd}), false);
        zone->add_route(h->get_netpoint(), h->get_netpoint(), nullptr, nullptr, route_of({nu, nd}),
                        false);
        nic_hosts_[node * gpn + r] = h;
      }
      auto* gw = zone->create_router(zn + "_gw");
      zone->add_route(gw, nullptr, nullptr, nullptr, {}, false);
      zone->add_route(nullptr, gw, nullptr, nullptr, {}, false);
      sg4::Link* gu = rail_link(parent, zn + "_up", uplink, 0);
      sg4::Link* gd = rail_link(parent, zn + "_down", uplink, 0);
      zone->seal();
      parent->add_route(zone->get_netpoint(), nullptr, gw, nullptr, route_of({gu}), false);
      parent->add_route(nullptr, zone->get_netpoint(), nullptr, gw, route_of({gd}), false);
    }
  }
  sites.seal();
  root->seal();
  pxn_hosts_ = hosts_;
  hosts_.resize(gpus_used);
  claims_ = LinkClaims(static_cast<int>(sg4::Engine::get_instance()->get_link_count()));
}

std::vector<std::pair<sg4::Host*, sg4::Host*>> Platform::legs(int a, int b) const {
  if (nic_hosts_.empty() || (a != b && same_island(a, b))) return {{hosts_[a], hosts_[b]}};
  const int ra = a % gpus_per_node_, rb = b % gpus_per_node_;
  if (!pxn_ || ra == rb) return {{nic_hosts_[a], nic_hosts_[b]}};
  const int peer = a - ra + rb;  // a's node-mate on b's rail
  return {{pxn_hosts_[a], pxn_hosts_[peer]}, {nic_hosts_[peer], nic_hosts_[b]}};
}

}  // namespace trident
