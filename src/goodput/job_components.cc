#include "goodput/job_components.h"

#include <cmath>

namespace trident {

std::vector<FailureSource> job_failure_sources(const ClusterSpec& cluster, int gpus) {
  const ReliabilitySpec& r = cluster.reliability;
  const NetworkSpec& net = cluster.network;
  const double g = gpus;
  const double nodes = std::ceil(g / cluster.gpus_per_node);
  const double nics = nodes * net.nics_per_node;
  double switches = 1, cables = nics;
  if (net.topology == Topology::kFatTree || net.topology == Topology::kRailOptimized) {
    // A leaf per rail per group of nodes_per_leaf nodes: the fat tree's leaves are its rail
    // switches too (cluster.h), so both fabrics count alike.
    const double leaves = std::ceil(nodes / net.nodes_per_leaf) * net.nics_per_node;
    const double leaf_uplinks = nics / net.oversubscription;
    // A job inside one leaf group crosses no spine; one inside a pod, no core.
    const bool spans_leaves = nodes > net.nodes_per_leaf;
    const bool spans_pods = net.tiers == 3 && net.nodes_per_pod > 0 && nodes > net.nodes_per_pod;
    double spines = 0, cores = 0;
    cables = nics;
    if (spans_pods) {
      // Three tiers: a spine gives half its ports to the leaves and half (less under
      // pod_oversubscription) to the core; a core switch has as many ports.
      spines = std::ceil(leaves / net.oversubscription);
      cores = std::ceil(spines / (2 * net.pod_oversubscription));
      cables += leaf_uplinks + leaf_uplinks / net.pod_oversubscription;
    } else if (spans_leaves) {
      spines = std::ceil(leaves / (2 * net.oversubscription));
      cables += leaf_uplinks;
    }
    switches = leaves + spines + cores;
  }
  // Switch planes: each NIC port on a fabric of its own (every switch and cable per plane).
  switches *= net.planes;
  cables *= net.planes;
  return {
      {"gpu", g, r.gpu_mtbf_s, false},
      {"hbm", g, r.hbm_mtbf_s, false},
      {"host", nodes, r.host_mtbf_s, false},
      {"nic", nics, r.nic_mtbf_s, false},
      {"switch", switches, r.switch_mtbf_s, false},
      {"link", cables, r.link_mtbf_s, false},
      {"software", g, r.software_mtbf_s, false},
      {"unplanned_maintenance", nodes, r.unplanned_maintenance_mtbf_s, false},
      {"planned_maintenance", nodes, r.planned_maintenance_mtbf_s, true},
  };
}

JobRates job_rates(const std::vector<FailureSource>& sources) {
  JobRates rates;
  for (const FailureSource& s : sources) (s.planned ? rates.planned : rates.unplanned) += s.rate();
  return rates;
}

}  // namespace trident
