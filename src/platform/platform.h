// SimGrid platform for a cluster: one host per GPU (speed = peak FLOP/s of the plan's
// precision), NVLink islands and an inter-island fabric.
//
//   root (star) ── leaf groups (star zones, fat tree only; one up and one down link each, the
//   │               capacity of the group's NICs divided by `oversubscription`), below pods
//   │               (three tiers, fabric_pods.h) and sites (cluster.sites, fabric_sites.h)
//   └── GPUs: to anywhere   GPU k ──nic_{node, k mod nics}_up──▶ ... ──nic_down──▶ GPU j
//             same island   GPU k ──nvl_k_up──▶ NVSwitch ──nvl_j_down──▶ GPU j   (bypass route)
//             to itself     GPU k ──nic_up──▶ ... ──nic_down──▶ GPU k  (loopback through its NIC)
//
// GPUs sit directly in their leaf group (or in the root for a single switch): SimGrid checks
// every new link's and host's name against every zone, so few zones keep building 16k GPUs
// fast. Islands smaller than a node (two NVLink domains per node, PCIe pairs) share their
// node's NICs; a leaf group then holds whole nodes. Latencies split half on each side, so
// GPU-to-GPU latency is nvlink.latency inside an island and network.latency across islands.
#ifndef TRIDENT_PLATFORM_PLATFORM_H_
#define TRIDENT_PLATFORM_PLATFORM_H_

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "config/cluster.h"
#include "lowering/link_claims.h"

namespace simgrid::s4u {
class Host;
class Link;
}  // namespace simgrid::s4u

namespace trident {

// Sets SimGrid's network model to plain latency + size / bandwidth with max-min sharing
// (CM02, no cross traffic, no TCP window). Requires that no zone exists yet.
void configure_network_model();

// Returns why SimGrid cannot be given `cluster`'s shape (an island that neither divides nor
// spans whole nodes), or "" when it can.
std::string platform_shape_problem(const ClusterSpec& cluster);

// A route between two GPUs as SimGrid resolves it: its links (dense ids), their summed
// latency and the smallest bandwidth among them (what a flow alone on the route gets).
//
// A flow runs as one SimGrid transfer between two hosts, or, on a rail-optimized fabric with
// PXN (platform/fabric_rail.h), as two side by side: over NVLink to the node-mate on the
// receiver's rail and from that node-mate's NIC to the receiver's; `links` then holds both
// legs' links, `latency` the larger leg latency (the legs are pipelined, as PXN's chunks are).
struct Route {
  std::vector<std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>> legs;
  std::vector<int> links;
  std::vector<double> link_bandwidth;  // of each of `links`
  double latency = 0;
  double bandwidth = 0;
};

class Platform {
 public:
  // Builds the islands holding GPUs [0, gpus_used) of `cluster`; with `islands_needed` (one
  // entry per island, nonzero for those to build), only those, and host() is null on the
  // others' GPUs (nothing is routed there: fast fidelity's replicas that stand for others).
  // Requires configure_network_model() first and 0 < gpus_used <= cluster.total_gpus().
  // Throws SimulationError when the shape cannot be built (platform_shape_problem) or SimGrid
  // rejects the platform.
  Platform(const ClusterSpec& cluster, double host_speed, int gpus_used,
           const std::vector<char>& islands_needed = {});

  simgrid::s4u::Host* host(int gpu) const { return hosts_[gpu]; }
  int island_of(int gpu) const { return gpu / island_size_; }
  bool same_island(int a, int b) const { return island_of(a) == island_of(b); }
  // True when a transfer from a to b runs over NVLink (a GPU's transfer to itself loops
  // through its NIC).
  bool over_nvlink(int a, int b) const { return a != b && same_island(a, b); }
  // Returns the protocol efficiency of a transfer between two GPUs (NVLink or network).
  double efficiency(int a, int b) const {
    return over_nvlink(a, b) ? nvlink_efficiency_ : network_efficiency_;
  }
  // Returns the GPU-to-GPU route latency between two GPUs (across sites: the WAN's too).
  double latency(int a, int b) const {
    if (over_nvlink(a, b)) return nvlink_latency_;
    const bool wan = sites_.count > 1 && sites_.site_of_node(a / gpus_per_node_, nodes_) !=
                                             sites_.site_of_node(b / gpus_per_node_, nodes_);
    return network_latency_ + (wan ? sites_.wan_latency : 0);
  }
  int gpus() const { return static_cast<int>(hosts_.size()); }
  // Returns the route from GPU a to GPU b (resolved once, then cached). Requires both built.
  const Route& route(int a, int b) const;
  // The links' flows in flight and closed-form claims (link_claims.h), kept by the engine.
  LinkClaims& claims() const { return claims_; }

 private:
  void build(const ClusterSpec& cluster, double host_speed, int gpus_used,
             const std::vector<char>& islands_needed);
  // The rail-optimized fabric (fabric_rail.cc).
  void build_rail(const ClusterSpec& cluster, double host_speed, int gpus_used,
                  const std::vector<char>& islands_needed);
  // Returns the hosts of the transfers a flow from a to b runs as (Route::legs).
  std::vector<std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>> legs(int a, int b) const;

  std::vector<simgrid::s4u::Host*> hosts_;
  int island_size_;
  double nvlink_efficiency_;
  double network_efficiency_;
  double nvlink_latency_;
  double network_latency_;
  // Rail-optimized fabric: the NIC endpoint of GPU slot node * gpus_per_node + rail (null when
  // not built), whether transfers between rails take PXN's NVLink hop.
  std::vector<simgrid::s4u::Host*> nic_hosts_;
  std::vector<simgrid::s4u::Host*> pxn_hosts_;  // every GPU built, past gpus_used too
  int gpus_per_node_ = 1;
  bool pxn_ = false;
  SiteSpec sites_;  // cluster.sites
  int nodes_ = 1;
  mutable std::unordered_map<long, Route> routes_;
  mutable std::unordered_map<const simgrid::s4u::Link*, int> link_ids_;
  mutable LinkClaims claims_;
};

}  // namespace trident

#endif  // TRIDENT_PLATFORM_PLATFORM_H_
