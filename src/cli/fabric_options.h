// `trident collective`'s fabric options: run the same collective on the cluster's GPUs under
// another fabric (topology, taper, rail groups, PXN, planes) without writing a cluster file.
#ifndef TRIDENT_CLI_FABRIC_OPTIONS_H_
#define TRIDENT_CLI_FABRIC_OPTIONS_H_

#include <boost/program_options.hpp>
#include <string>

#include "config/cluster.h"

namespace trident {

struct FabricArgs {
  std::string topology;
  int nodes_per_leaf = 0;
  double oversubscription = 0;
  int planes = 0;
  bool no_pxn = false;
  int sites = 0;
  std::string wan_bandwidth;  // a quantity, e.g. "6.4 Tbps"
  std::string wan_latency;    // e.g. "5 ms"
  // True when any fabric option was given.
  bool given(const boost::program_options::variables_map& vm) const;
};

// Adds --topology, --nodes-per-leaf, --oversubscription, --planes, --no-pxn, --sites,
// --wan-bandwidth and --wan-latency to `opts`.
void add_fabric_options(boost::program_options::options_description* opts, FabricArgs* args);

// Sets the given options in cluster->network and checks the fabric as a cluster file's is
// checked. Throws boost::program_options::error (exit code 2) on a bad value or fabric.
void apply_fabric_args(const FabricArgs& args, const boost::program_options::variables_map& vm,
                       ClusterSpec* cluster);

// Returns "rail-optimized, 32 nodes per leaf, taper 1:1, PXN, 4 planes, 2 sites" and the like.
std::string fabric_label(const ClusterSpec& cluster);

}  // namespace trident

#endif  // TRIDENT_CLI_FABRIC_OPTIONS_H_
