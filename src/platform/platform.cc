#include "platform/platform.h"

#include <algorithm>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <string>

namespace sg4 = simgrid::s4u;

namespace trident {
namespace {

sg4::Link* make_link(sg4::NetZone* zone, const std::string& name, double bw, double latency) {
  return zone->create_link(name, bw)->set_latency(latency)->seal();
}

std::vector<sg4::LinkInRoute> route(std::initializer_list<sg4::Link*> links) {
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

Platform::Platform(const ClusterSpec& c, double host_speed, int gpus_used)
    : island_size_(c.nvlink.island_size),
      nvlink_efficiency_(c.nvlink.protocol_efficiency),
      network_efficiency_(c.network.protocol_efficiency),
      nvlink_latency_(c.nvlink.latency),
      network_latency_(c.network.latency) {
  const int islands = (gpus_used + island_size_ - 1) / island_size_;
  const int nics = c.network.nics_per_node;
  const double nvl_lat = c.nvlink.latency / 2, net_lat = c.network.latency / 2;
  const bool fat_tree = c.network.topology == Topology::kFatTree;
  // A pod is the set of islands under one leaf-switch group.
  const int nodes_per_island = std::max(1, island_size_ / c.gpus_per_node);
  const int islands_per_pod =
      fat_tree ? std::max(1, c.network.nodes_per_leaf / nodes_per_island) : islands;
  const int pods = (islands + islands_per_pod - 1) / islands_per_pod;

  sg4::NetZone* root = sg4::create_star_zone("fabric");
  hosts_.reserve(static_cast<size_t>(islands) * island_size_);
  for (int pod = 0; pod < pods; ++pod) {
    sg4::NetZone* pod_zone = root;
    if (fat_tree) {
      pod_zone = sg4::create_star_zone("pod" + std::to_string(pod));
      pod_zone->set_parent(root);
    }
    const int first_island = pod * islands_per_pod;
    simgrid::kernel::routing::NetPoint* pod_gateway = nullptr;
    const int last_island = std::min(islands, first_island + islands_per_pod);
    for (int isl = first_island; isl < last_island; ++isl) {
      const std::string iname = "island" + std::to_string(isl);
      sg4::NetZone* zone = sg4::create_full_zone(iname);
      zone->set_parent(pod_zone);
      auto* gw = zone->create_router(iname + "_gw");
      if (pod_gateway == nullptr) pod_gateway = gw;
      std::vector<sg4::Host*> members;
      std::vector<sg4::Link*> up, down, nic_up, nic_down;
      for (int k = 0; k < island_size_; ++k) {
        const int gpu = isl * island_size_ + k;
        sg4::Host* h = zone->create_host("gpu" + std::to_string(gpu), host_speed)->seal();
        members.push_back(h);
        up.push_back(
            make_link(zone, "nvl" + std::to_string(gpu) + "_up", c.nvlink.bandwidth, nvl_lat));
        down.push_back(
            make_link(zone, "nvl" + std::to_string(gpu) + "_down", c.nvlink.bandwidth, nvl_lat));
      }
      // NICs of every node of the island; GPU i of a node uses NIC i mod nics.
      const int first_node = isl * island_size_ / c.gpus_per_node;
      const int island_nodes = std::max(1, island_size_ / c.gpus_per_node);
      for (int n = 0; n < island_nodes; ++n) {
        for (int j = 0; j < nics; ++j) {
          const std::string nm = "nic" + std::to_string(first_node + n) + "_" + std::to_string(j);
          nic_up.push_back(make_link(zone, nm + "_up", c.network.nic_bandwidth, net_lat));
          nic_down.push_back(make_link(zone, nm + "_down", c.network.nic_bandwidth, net_lat));
        }
      }
      for (int a = 0; a < island_size_; ++a) {
        for (int b = 0; b < island_size_; ++b) {
          if (a == b) continue;
          zone->add_route(members[a]->get_netpoint(), members[b]->get_netpoint(), nullptr, nullptr,
                          route({up[a], down[b]}), false);
        }
        const int gpu = isl * island_size_ + a;
        const int nic =
            (gpu / c.gpus_per_node - first_node) * nics + (gpu % c.gpus_per_node) % nics;
        zone->add_route(members[a]->get_netpoint(), gw, nullptr, nullptr, route({nic_up[nic]}),
                        false);
        zone->add_route(gw, members[a]->get_netpoint(), nullptr, nullptr, route({nic_down[nic]}),
                        false);
      }
      zone->seal();
      pod_zone->add_route(zone->get_netpoint(), nullptr, gw, nullptr, {}, false);
      pod_zone->add_route(nullptr, zone->get_netpoint(), nullptr, gw, {}, false);
      for (sg4::Host* h : members) hosts_.push_back(h);
    }
    if (fat_tree) {
      // SimGrid resolves a route through a zone's gateway recursively from the common ancestor,
      // which fails for a router placed directly in the pod while hosts sit one level deeper;
      // the first island's gateway serves as the pod's (the pod's star has no links of its own).
      const int pod_nodes = (last_island - first_island) * nodes_per_island;
      const double uplink =
          pod_nodes * nics * c.network.nic_bandwidth / c.network.oversubscription;
      sg4::Link* pu = make_link(root, "pod" + std::to_string(pod) + "_up", uplink, 0);
      sg4::Link* pd = make_link(root, "pod" + std::to_string(pod) + "_down", uplink, 0);
      pod_zone->seal();
      root->add_route(pod_zone->get_netpoint(), nullptr, pod_gateway, nullptr, route({pu}), false);
      root->add_route(nullptr, pod_zone->get_netpoint(), nullptr, pod_gateway, route({pd}), false);
    }
  }
  root->seal();
  hosts_.resize(gpus_used);
}

}  // namespace trident
