#include "platform/platform.h"

#include <algorithm>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <string>

#include "core/errors.h"
#include "platform/fabric_pods.h"
#include "platform/fabric_sites.h"

namespace sg4 = simgrid::s4u;

namespace trident {
namespace {

sg4::Link* make_link(sg4::NetZone* zone, const std::string& name, double bw, double latency) {
  return zone->create_link(name, bw)->set_latency(latency)->seal();
}

std::vector<sg4::LinkInRoute> links_of(std::initializer_list<sg4::Link*> links) {
  std::vector<sg4::LinkInRoute> out;
  for (sg4::Link* l : links) out.emplace_back(l);
  return out;
}

}  // namespace

void configure_network_model() {
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:0");
}

Platform::Platform(const ClusterSpec& c, double host_speed, int gpus_used,
                   const std::vector<char>& islands_needed)
    : island_size_(c.nvlink.island_size),
      nvlink_efficiency_(c.nvlink.protocol_efficiency),
      network_efficiency_(c.network.protocol_efficiency),
      nvlink_latency_(c.nvlink.latency),
      network_latency_(c.network.latency),
      gpus_per_node_(c.gpus_per_node),
      pxn_(c.network.pxn),
      sites_(c.sites),
      nodes_(c.nodes) {
  const std::string problem = platform_shape_problem(c);
  if (!problem.empty()) throw SimulationError("cannot build the platform: " + problem);
  try {
    if (c.network.topology == Topology::kRailOptimized) {
      build_rail(c, host_speed, gpus_used, islands_needed);
    } else {
      build(c, host_speed, gpus_used, islands_needed);
    }
  } catch (const std::exception& e) {
    // SimGrid reports a malformed platform with an exception: never let it escape as an abort.
    throw SimulationError(std::string("cannot build the platform: ") + e.what());
  }
}

void Platform::build(const ClusterSpec& c, double host_speed, int gpus_used,
                     const std::vector<char>& islands_needed) {
  const int gpn = c.gpus_per_node;
  const int islands = (gpus_used + island_size_ - 1) / island_size_;
  const int nics = c.network.nics_per_node;
  const double nvl_lat = c.nvlink.latency / 2, net_lat = c.network.latency / 2;
  const bool fat_tree = c.network.topology == Topology::kFatTree;
  // Leaf zones with an uplink: a fat tree's leaf groups; with several sites a single switch is
  // one untapered group per site (SimGrid reaches a site's gateway from a zone below it only).
  const bool leaf_zones = fat_tree || c.sites.count > 1;
  // cluster.stragglers: other jobs' traffic takes a share of every inter-node fabric link.
  const StragglerSpec& st = c.stragglers;
  const double nic_bandwidth = c.network.nic_bandwidth * (1 - st.background_traffic);
  // A leaf group holds whole islands and whole nodes: islands of a node or more than a node
  // (island_size a multiple of gpus_per_node), or several islands per node (a divisor). With
  // several sites (cluster.sites) every leaf group lies in one site.
  const int site_islands =
      c.sites.count > 1 ? c.nodes / c.sites.count * gpn / island_size_ : islands;
  const int islands_per_group = !fat_tree ? site_islands
                                : island_size_ >= gpn
                                    ? std::max(1, c.network.nodes_per_leaf / (island_size_ / gpn))
                                    : std::max(1, c.network.nodes_per_leaf) * (gpn / island_size_);
  std::vector<std::pair<int, int>> groups;  // [first island, last island) of each group
  for (int site_first = 0; site_first < islands; site_first += site_islands) {
    const int site_last = std::min(islands, site_first + site_islands);
    for (int first = site_first; first < site_last; first += islands_per_group) {
      groups.emplace_back(first, std::min(site_last, first + islands_per_group));
    }
  }

  const auto needed = [&](int isl) {
    return islands_needed.empty() || islands_needed[static_cast<size_t>(isl)] != 0;
  };
  sg4::NetZone* root = sg4::create_star_zone(c.sites.count > 1 ? "wan" : "fabric");
  // Sites below the root (fabric_sites.h), pods below the sites (fabric_pods.h).
  SiteTier sites(root, c);
  PodTier pods(&sites, c.network, (islands * island_size_ + gpn - 1) / gpn);
  hosts_.assign(static_cast<size_t>(islands) * island_size_, nullptr);
  for (size_t grp = 0; grp < groups.size(); ++grp) {
    const auto [first_island, last_island] = groups[grp];
    bool any = false;
    for (int isl = first_island; isl < last_island; ++isl) any = any || needed(isl);
    if (!any) continue;
    const int group_first_node = first_island * island_size_ / gpn;
    const int group_nodes = (last_island * island_size_ - 1) / gpn - group_first_node + 1;
    const double uplink = group_nodes * nics * nic_bandwidth / c.network.oversubscription;
    sg4::NetZone* zone = sites.zone_of(group_first_node);
    sg4::NetZone* parent = zone;
    if (leaf_zones) {
      parent = pods.parent_of(group_first_node);
      zone = sg4::create_star_zone("leaf" + std::to_string(grp));
      zone->set_parent(parent);
    }
    // NICs of the group's nodes; GPU i of a node uses NIC i mod nics. Islands smaller than a
    // node share their node's NICs, created with the first island built there.
    std::vector<sg4::Link*> nic_up(static_cast<size_t>(group_nodes) * nics, nullptr);
    // The degraded NIC (cluster.stragglers.nic_rank's), by its index here, or -1.
    const int nic_gpu = st.nic_fraction < 1 ? st.nic_rank : -1;
    const int degraded_nic =
        nic_gpu >= 0 && nic_gpu / gpn >= group_first_node &&
                nic_gpu / gpn < group_first_node + group_nodes
            ? (nic_gpu / gpn - group_first_node) * nics + (nic_gpu % gpn) % nics
            : -1;
    std::vector<sg4::Link*> nic_down(nic_up.size(), nullptr);
    for (int isl = first_island; isl < last_island; ++isl) {
      if (!needed(isl)) continue;
      std::vector<sg4::Host*> members;
      std::vector<sg4::Link*> up, down;
      for (int k = 0; k < island_size_; ++k) {
        const int gpu = isl * island_size_ + k;
        const std::string name = std::to_string(gpu);
        sg4::Host* h = zone->create_host("gpu" + name, host_speed)->seal();
        members.push_back(h);
        // cluster.stragglers: one GPU's NVLink may run below nominal.
        const double nvl_bw =
            gpu == st.nvlink_rank ? c.nvlink.bandwidth * st.nvlink_fraction : c.nvlink.bandwidth;
        up.push_back(make_link(zone, "nvl" + name + "_up", nvl_bw, nvl_lat));
        down.push_back(make_link(zone, "nvl" + name + "_down", nvl_bw, nvl_lat));
        const int nic = (gpu / gpn - group_first_node) * nics + (gpu % gpn) % nics;
        if (nic_up[nic] == nullptr) {
          const std::string nm =
              "nic" + std::to_string(gpu / gpn) + "_" + std::to_string((gpu % gpn) % nics);
          const double bw = nic_bandwidth * (nic == degraded_nic ? st.nic_fraction : 1.0);
          nic_up[nic] = make_link(zone, nm + "_up", bw, net_lat);
          nic_down[nic] = make_link(zone, nm + "_down", bw, net_lat);
        }
        zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr, links_of({nic_up[nic]}),
                        false);
        zone->add_route(nullptr, h->get_netpoint(), nullptr, nullptr, links_of({nic_down[nic]}),
                        false);
        // Out through the NIC and back in: the engine's mirror of one edge of a symmetric ring.
        zone->add_route(h->get_netpoint(), h->get_netpoint(), nullptr, nullptr,
                        links_of({nic_up[nic], nic_down[nic]}), false);
        hosts_[gpu] = h;
      }
      for (int a = 0; a < island_size_; ++a) {
        for (int b = 0; b < island_size_; ++b) {
          if (a == b) continue;
          zone->add_bypass_route(members[a]->get_netpoint(), members[b]->get_netpoint(), nullptr,
                                 nullptr, links_of({up[a], down[b]}));
        }
      }
    }
    if (leaf_zones) {
      // Traffic leaves the group through a router of its own, then the group's uplink.
      auto* gw = zone->create_router("leaf" + std::to_string(grp) + "_gw");
      zone->add_route(gw, nullptr, nullptr, nullptr, {}, false);
      zone->add_route(nullptr, gw, nullptr, nullptr, {}, false);
      sg4::Link* gu = make_link(parent, "leaf" + std::to_string(grp) + "_up", uplink, 0);
      sg4::Link* gd = make_link(parent, "leaf" + std::to_string(grp) + "_down", uplink, 0);
      zone->seal();
      parent->add_route(zone->get_netpoint(), nullptr, gw, nullptr, links_of({gu}), false);
      parent->add_route(nullptr, zone->get_netpoint(), nullptr, gw, links_of({gd}), false);
    }
  }
  pods.seal();
  sites.seal();
  root->seal();
  hosts_.resize(gpus_used);
  claims_ = LinkClaims(static_cast<int>(sg4::Engine::get_instance()->get_link_count()));
}

const Route& Platform::route(int a, int b) const {
  const long key = static_cast<long>(a) * static_cast<long>(hosts_.size()) + b;
  auto it = routes_.find(key);
  if (it != routes_.end()) return it->second;
  Route r;
  r.legs = legs(a, b);
  bool first = true;
  for (const auto& [src, dst] : r.legs) {
    std::vector<sg4::Link*> links;
    double latency = 0;
    src->route_to(dst, links, &latency);
    r.latency = std::max(r.latency, latency);
    for (const sg4::Link* l : links) {
      r.bandwidth = first ? l->get_bandwidth() : std::min(r.bandwidth, l->get_bandwidth());
      first = false;
      const auto id = link_ids_.emplace(l, static_cast<int>(link_ids_.size())).first->second;
      r.links.push_back(id);
      r.link_bandwidth.push_back(l->get_bandwidth());
    }
  }
  return routes_.emplace(key, std::move(r)).first->second;
}

std::string platform_shape_problem(const ClusterSpec& c) {
  const int island = c.nvlink.island_size, gpn = c.gpus_per_node;
  if (island < 1 || gpn < 1 || c.network.nics_per_node < 1) {
    return "island_size, gpus_per_node and nics_per_node must be at least 1";
  }
  if (gpn % island != 0 && island % gpn != 0) {
    return "an NVLink island of " + std::to_string(island) + " GPUs neither divides nor spans " +
           "whole nodes of " + std::to_string(gpn) + " GPUs";
  }
  return "";
}

}  // namespace trident
