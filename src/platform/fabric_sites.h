// Datacenters joined by WAN links (cluster.sites, docs/fabrics.md): below the root (the WAN),
// one star zone per site holding that site's fabric (its leaf groups, pods or hosts), with one
// up and one down link to the root of the site's WAN bandwidth, each carrying half the WAN
// latency. A transfer between sites climbs its site's fabric, crosses both WAN links and
// descends the other's: network latency + wan_latency, and it shares both sites' WAN links
// with every other transfer between them. With one site there is no site zone: the fabric
// hangs below the root as before.
#ifndef TRIDENT_PLATFORM_FABRIC_SITES_H_
#define TRIDENT_PLATFORM_FABRIC_SITES_H_

#include <map>
#include <simgrid/s4u/NetZone.hpp>
#include <string>

#include "config/cluster.h"

namespace trident {

// Seals `zone` (a child of `parent`, every route inside it added) and joins it to `parent`
// through a gateway router `NAME_gw` in a zone of its own, `NAME_<gateway_zone>`, below `zone`
// (SimGrid climbs from a host to a gateway one zone at a time, so a router beside child zones
// is not reachable), over one up and one down link `NAME<link>_up` / `_down` of `bandwidth`
// and `latency` each. Used by sites and by a fat tree's pods (fabric_pods.h).
void seal_below(simgrid::s4u::NetZone* parent, simgrid::s4u::NetZone* zone, const std::string& name,
                const char* gateway_zone, const char* link, double bandwidth, double latency);

class SiteTier {
 public:
  // The sites of `cluster` below `root`.
  SiteTier(simgrid::s4u::NetZone* root, const ClusterSpec& cluster);
  // Returns the zone that node `node`'s fabric hangs below: its site (created on first use),
  // or the root with one site.
  simgrid::s4u::NetZone* zone_of(int node);
  // Seals every site and links it to the root. Requires everything inside routed.
  void seal();

 private:
  simgrid::s4u::NetZone* root_;
  SiteSpec sites_;
  int nodes_;
  std::map<int, simgrid::s4u::NetZone*> zones_;
};

}  // namespace trident

#endif  // TRIDENT_PLATFORM_FABRIC_SITES_H_
