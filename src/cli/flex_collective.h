// trident collective --op all-to-all --dispatcher flex: one flex (DeepEP) dispatch of a batch
// of tokens over the first N GPUs, simulated, with the bandwidths DeepEP's tests print.
#ifndef TRIDENT_CLI_FLEX_COLLECTIVE_H_
#define TRIDENT_CLI_FLEX_COLLECTIVE_H_

#include <string>

#include "config/cluster.h"
#include "workload/expert_routing.h"

namespace trident {

struct FlexDispatchArgs {
  int tokens = 4096;         // tokens per GPU (DeepEP's tests: 4096)
  int hidden = 7168;         // hidden size
  double element_bytes = 2;  // bytes per element (FP8 with DeepEP's scales: 1 + 4 / 128)
  ExpertRouting routing;     // experts, top-k and group limit
};

// Simulates the dispatch (its combine moves the same bytes back) over GPUs 0..gpus-1 of
// `cluster` and prints, as `format` (table, json or csv), its time and DeepEP's "bottleneck
// bandwidths" (lowering/flex_dispatch.h deepep_bytes over the time). Returns the exit code.
// Requires 2 <= gpus <= the cluster's GPUs and a routing valid for that many experts' ranks.
int run_flex_dispatch(const ClusterSpec& cluster, int gpus, const FlexDispatchArgs& args,
                      const std::string& format);

}  // namespace trident

#endif  // TRIDENT_CLI_FLEX_COLLECTIVE_H_
