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
// = ceil(gpus / gpus_per_node); NICs = nodes x nics_per_node; fabric switches of a fat tree or
// rail-optimized fabric (the same shape: one leaf, or rail switch, per rail per group of
// nodes_per_leaf nodes): the leaves, leaves / (2 x oversubscription) spines when the job spans
// leaf groups (a spine has as many ports as a leaf, half of whose ports go up, less under
// oversubscription); with three tiers and a job spanning pods, leaves / oversubscription
// spines (half their ports up) and spines / (2 x pod_oversubscription) core switches; cables:
// one per NIC to its leaf, NICs / oversubscription leaf uplinks, and across pods that / pod_
// oversubscription spine uplinks; everything of the fabric times network.planes. A single-
// switch network counts one switch and a cable per NIC. Every source of cluster.reliability,
// in the table's order.
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
