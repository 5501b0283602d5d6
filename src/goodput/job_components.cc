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
  if (net.topology == Topology::kFatTree) {
    const double leaves = std::ceil(nodes / net.nodes_per_leaf) * net.nics_per_node;
    // A job inside one leaf group crosses no spine.
    const double spines =
        nodes > net.nodes_per_leaf ? std::ceil(leaves / (2 * net.oversubscription)) : 0;
    switches = leaves + spines;
    cables = spines > 0 ? nics + nics / net.oversubscription : nics;
  }
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
