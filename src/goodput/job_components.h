// What can interrupt a training job: its components counted from the cluster's shape, each
// kind with its failure rate (cluster.reliability), summed into the job's interruption rates.
#ifndef TRIDENT_GOODPUT_JOB_COMPONENTS_H_
#define TRIDENT_GOODPUT_JOB_COMPONENTS_H_

#include <string>
#include <vector>

#include "config/cluster.h"

namespace trident {

// One kind of component of a job: how many the job uses and the interruptions it causes.
struct FailureSource {
  std::string name;   // "gpu", "hbm", "host", ...
  double count = 0;   // components of that kind the job depends on
  double mtbf_s = 0;  // per component
  bool planned = false;
  // Returns interruptions per second of the whole job from this kind: count / mtbf.
  double rate() const { return mtbf_s > 0 ? count / mtbf_s : 0; }
};

// The components of a job on `gpus` GPUs of `cluster` (requires gpus >= 1): GPUs; nodes
// = ceil(gpus / gpus_per_node); NICs = nodes x nics_per_node; fabric switches of a rail-
// optimised two-level fat tree: one leaf per rail per group of nodes_per_leaf nodes, and
// leaves / (2 x oversubscription) spines (a spine has as many ports as a leaf, half of whose
// ports go up, less under oversubscription); cables: one per NIC to its leaf and NICs /
// oversubscription leaf uplinks. A single-switch network counts one switch and a cable per
// NIC. Every source of cluster.reliability, in the table's order.
std::vector<FailureSource> job_failure_sources(const ClusterSpec& cluster, int gpus);

struct JobRates {
  double unplanned = 0;  // interruptions per second that lose work
  double planned = 0;    // planned interruptions per second (no work lost)
  // Returns the job's mean time between interruptions of either kind (s); 0 when none.
  double mtbf_s() const { return unplanned + planned > 0 ? 1 / (unplanned + planned) : 0; }
};

// Returns the summed rates of `sources`.
JobRates job_rates(const std::vector<FailureSource>& sources);

}  // namespace trident

#endif  // TRIDENT_GOODPUT_JOB_COMPONENTS_H_
