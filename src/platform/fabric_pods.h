// The third tier of a fat tree (cluster.network.tiers: 3): pods of whole leaf groups under the
// root (the core), each pod a star zone (its spine) whose leaf groups hang below it, with one
// up and one down link to the core of the pod's leaf uplink capacity / pod_oversubscription.
// Pods hang below their site's zone (fabric_sites.h), the root with one site.
// Routing goes up only as high as needed: SimGrid's hierarchical routing climbs to the lowest
// zone holding both ends (leaf group, pod, core).
#ifndef TRIDENT_PLATFORM_FABRIC_PODS_H_
#define TRIDENT_PLATFORM_FABRIC_PODS_H_

#include <map>
#include <simgrid/s4u/NetZone.hpp>

#include "config/cluster.h"
#include "platform/fabric_sites.h"

namespace trident {

class PodTier {
 public:
  // Pods of `net`.nodes_per_pod nodes when net.tiers is 3, else none, over a fabric of `nodes`
  // nodes: a pod's core uplink carries its nodes' NICs / oversubscription / pod_oversubscription
  // (whole pods' capacity, also when only some of their groups are built).
  PodTier(SiteTier* sites, const NetworkSpec& net, int nodes);
  // Returns the zone the leaf group whose first node is `first_node` hangs below: its pod
  // (created on first use), or its site's zone without pods.
  simgrid::s4u::NetZone* parent_of(int first_node);
  // Seals every pod and links it to its site's zone. Requires every leaf group routed in its
  // pod.
  void seal();

 private:
  SiteTier* sites_;
  int nodes_;
  int nodes_per_pod_ = 0;  // 0: two tiers
  double node_uplink_;     // a node's share of a pod's core uplink (bytes/s)
  std::map<int, simgrid::s4u::NetZone*> pods_;
};

}  // namespace trident

#endif  // TRIDENT_PLATFORM_FABRIC_PODS_H_
