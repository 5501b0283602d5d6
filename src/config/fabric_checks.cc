#include "config/fabric_checks.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace trident {
namespace {

std::string gbps(double bytes_per_s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g Gbps", bytes_per_s * 8 / 1e9);
  return text;
}

// cluster.sites: whole sites of whole leaf groups, pods and NVLink islands, and a WAN.
void add_site_issues(const ClusterSpec& c, std::vector<SpecIssue>* issues) {
  const SiteSpec& st = c.sites;
  const NetworkSpec& net = c.network;
  if (st.count == 1) {
    if (st.wan_bandwidth > 0) {
      issues->push_back({{"cluster.sites.wan_bandwidth", "cluster.sites.count"},
                         "a WAN joins two or more sites, and count is 1 (expected count 2 or "
                         "more, or no wan_bandwidth)"});
    }
    return;
  }
  if (st.wan_bandwidth <= 0) {
    issues->push_back({{"cluster.sites.wan_bandwidth", "cluster.sites.count"},
                       std::to_string(st.count) +
                           " sites need wan_bandwidth: what each site's WAN links carry per "
                           "direction"});
  }
  if (c.nodes % st.count != 0) {
    issues->push_back({{"cluster.sites.count", "cluster.nodes"},
                       std::to_string(c.nodes) + " nodes do not split into " +
                           std::to_string(st.count) + " sites of equal size"});
    return;
  }
  const int per_site = c.nodes / st.count;
  const auto whole = [&](const char* key, const char* what, int nodes) {
    if (nodes > 0 && per_site % nodes != 0) {
      issues->push_back({{"cluster.sites.count", key},
                         "a site of " + std::to_string(per_site) + " nodes does not hold whole " +
                             what + " of " + std::to_string(nodes) +
                             " nodes (each site is a copy of the fabric)"});
    }
  };
  const int island_nodes = c.gpus_per_node > 0 ? c.nvlink.island_size / c.gpus_per_node : 0;
  whole("cluster.nvlink.island_size", "NVLink islands", island_nodes);
  if (net.topology != Topology::kSingleSwitch) {
    whole("cluster.network.nodes_per_leaf", "leaf groups", std::min(net.nodes_per_leaf, per_site));
    if (net.tiers == 3) whole("cluster.network.nodes_per_pod", "pods", net.nodes_per_pod);
  }
}

}  // namespace

void add_fabric_issues(const ClusterSpec& c, std::vector<SpecIssue>* issues) {
  const NetworkSpec& net = c.network;
  if (net.topology == Topology::kRailOptimized) {
    if (net.nics_per_node != c.gpus_per_node) {
      issues->push_back(
          {{"cluster.network.nics_per_node", "cluster.network.topology"},
           "a rail-optimized fabric puts NIC i of every node on rail i and GPU i on NIC i: "
           "nics_per_node " +
               std::to_string(net.nics_per_node) + " must equal gpus_per_node " +
               std::to_string(c.gpus_per_node)});
    }
    const int island = c.nvlink.island_size;
    if (net.pxn && island > 0 && island % c.gpus_per_node != 0) {
      issues->push_back(
          {{"cluster.network.pxn", "cluster.nvlink.island_size"},
           "PXN moves a transfer over NVLink to the node-mate on the receiver's rail, but an "
           "NVLink island of " +
               std::to_string(island) + " GPUs does not join the " +
               std::to_string(c.gpus_per_node) +
               " GPUs of a node (expected pxn: false, or islands of whole nodes)"});
    }
  }
  if (net.tiers == 3) {
    if (net.topology != Topology::kFatTree) {
      issues->push_back({{"cluster.network.tiers", "cluster.network.topology"},
                         std::string("tiers 3 builds a fat tree of pods; topology ") +
                             topology_name(net.topology) +
                             " has its own shape (expected "
                             "topology fat-tree, or tiers 2)"});
    } else if (net.nodes_per_pod < 1 || net.nodes_per_pod % net.nodes_per_leaf != 0 ||
               net.nodes_per_pod == net.nodes_per_leaf) {
      issues->push_back({{"cluster.network.nodes_per_pod", "cluster.network.tiers"},
                         "a fat tree of 3 tiers needs nodes_per_pod, a multiple (2 or more) of "
                         "nodes_per_leaf " +
                             std::to_string(net.nodes_per_leaf) + ", not " +
                             std::to_string(net.nodes_per_pod)});
    }
  } else if (net.nodes_per_pod > 0 || net.pod_oversubscription != 1) {
    issues->push_back({{net.nodes_per_pod > 0 ? "cluster.network.nodes_per_pod"
                                              : "cluster.network.pod_oversubscription",
                        "cluster.network.tiers"},
                       "pods exist only in a fat tree of 3 tiers (expected tiers: 3)"});
  }
  add_site_issues(c, issues);
  if (net.planes > 1 && net.nic_bandwidth / net.planes < kMinPlaneBandwidth) {
    issues->push_back(
        {{"cluster.network.planes", "cluster.network.nic_bandwidth"},
         std::to_string(net.planes) + " planes leave " + gbps(net.nic_bandwidth / net.planes) +
             " of a " + gbps(net.nic_bandwidth) +
             " NIC per plane, below the slowest switch port (" + gbps(kMinPlaneBandwidth) + ")"});
  }
}

}  // namespace trident
