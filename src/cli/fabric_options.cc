#include "cli/fabric_options.h"

#include <fmt/format.h>

#include "config/checks.h"
#include "config/limits.h"
#include "core/units.h"

namespace po = boost::program_options;

namespace trident {

bool FabricArgs::given(const po::variables_map& vm) const {
  for (const char* key : {"topology", "nodes-per-leaf", "oversubscription", "planes", "no-pxn",
                          "sites", "wan-bandwidth", "wan-latency"}) {
    if (vm.count(key) != 0) return true;
  }
  return false;
}

void add_fabric_options(po::options_description* opts, FabricArgs* a) {
  opts->add_options()("topology", po::value(&a->topology),
                      "fabric: single-switch, fat-tree or rail-optimized (default: the "
                      "cluster's; docs/fabrics.md)")(
      "nodes-per-leaf", po::value(&a->nodes_per_leaf),
      "fabric: nodes under one leaf (fat tree) or rail switch (rail-optimized)")(
      "oversubscription", po::value(&a->oversubscription),
      "fabric: leaf downlink / uplink capacity (1: non-blocking)")(
      "planes", po::value(&a->planes), "fabric: switch planes per NIC (default 1)")(
      "no-pxn", po::bool_switch(&a->no_pxn),
      "rail-optimized: transfers to another rail cross the spine, not NVLink (NCCL_PXN_DISABLE)")(
      "sites", po::value(&a->sites),
      "datacenters the nodes split into evenly, joined by WAN links (cluster.sites.count)")(
      "wan-bandwidth", po::value(&a->wan_bandwidth),
      "per site and direction, e.g. '6.4 Tbps' (cluster.sites.wan_bandwidth)")(
      "wan-latency", po::value(&a->wan_latency),
      "one way between sites, e.g. '5 ms' (cluster.sites.wan_latency)");
}

namespace {

double quantity_arg(const std::string& option, const std::string& text, Dimension dim) {
  std::string error;
  const std::optional<double> v = parse_quantity(text, dim, &error);
  if (!v) throw po::error("--" + option + ": " + error);
  return *v;
}

}  // namespace

void apply_fabric_args(const FabricArgs& a, const po::variables_map& vm, ClusterSpec* c) {
  NetworkSpec& net = c->network;
  if (vm.count("topology")) {
    if (a.topology == "single-switch") {
      net.topology = Topology::kSingleSwitch;
      net.oversubscription = 1;
    } else if (a.topology == "fat-tree") {
      net.topology = Topology::kFatTree;
    } else if (a.topology == "rail-optimized") {
      net.topology = Topology::kRailOptimized;
    } else {
      throw po::error("--topology must be single-switch, fat-tree or rail-optimized, not '" +
                      a.topology + "'");
    }
  }
  if (vm.count("nodes-per-leaf")) {
    if (a.nodes_per_leaf < 1 || a.nodes_per_leaf > limits::kMaxNodes) {
      throw po::error(fmt::format("--nodes-per-leaf must be between 1 and {}", limits::kMaxNodes));
    }
    net.nodes_per_leaf = a.nodes_per_leaf;
  }
  if (vm.count("oversubscription")) {
    if (!(a.oversubscription >= 1 && a.oversubscription <= limits::kMaxOversubscription)) {
      throw po::error(
          fmt::format("--oversubscription must be between 1 and {}", limits::kMaxOversubscription));
    }
    net.oversubscription = a.oversubscription;
  }
  if (vm.count("planes")) {
    if (a.planes < 1 || a.planes > limits::kMaxPlanes) {
      throw po::error(fmt::format("--planes must be between 1 and {}", limits::kMaxPlanes));
    }
    net.planes = a.planes;
  }
  if (a.no_pxn) net.pxn = false;
  if (vm.count("sites")) {
    if (a.sites < 1 || a.sites > 64) throw po::error("--sites must be between 1 and 64");
    c->sites.count = a.sites;
  }
  if (vm.count("wan-bandwidth")) {
    c->sites.wan_bandwidth = quantity_arg("wan-bandwidth", a.wan_bandwidth, Dimension::kBandwidth);
    if (c->sites.wan_bandwidth <= 0) throw po::error("--wan-bandwidth must be positive");
  }
  if (vm.count("wan-latency")) {
    c->sites.wan_latency = quantity_arg("wan-latency", a.wan_latency, Dimension::kTime);
    if (c->sites.wan_latency < 0 || c->sites.wan_latency > limits::kMaxLatency) {
      throw po::error("--wan-latency must be between 0 and 1 s");
    }
  }
  for (const SpecIssue& issue : cluster_issues(*c)) {
    throw po::error(issue.keys.front() + ": " + issue.message);
  }
}

std::string fabric_label(const ClusterSpec& c) {
  const NetworkSpec& net = c.network;
  std::string out = topology_name(net.topology);
  if (net.topology != Topology::kSingleSwitch) {
    out += fmt::format(", {} nodes per {} switch, taper {}:1", net.nodes_per_leaf,
                       net.topology == Topology::kRailOptimized ? "rail" : "leaf",
                       net.oversubscription);
  }
  if (net.topology == Topology::kRailOptimized) out += net.pxn ? ", PXN" : ", no PXN";
  if (net.planes > 1) out += fmt::format(", {} planes", net.planes);
  if (c.sites.count > 1) {
    out += fmt::format(", {} sites (WAN {:.4g} Gbps, {:.4g} ms)", c.sites.count,
                       c.sites.wan_bandwidth * 8 / 1e9, c.sites.wan_latency * 1e3);
  }
  return out;
}

}  // namespace trident
