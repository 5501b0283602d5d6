// Limits and cross-field checks of cluster, model and plan specs. Pure functions on the typed
// specs, so code that builds specs itself (plan search, sweeps) can validate them the same
// way the YAML loader does.
#ifndef TRIDENT_CONFIG_CHECKS_H_
#define TRIDENT_CONFIG_CHECKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "config/cluster.h"
#include "config/model.h"
#include "config/plan.h"
#include "config/scenario.h"

namespace trident {

// Upper bounds that catch absurd input (typos, unit mistakes) before it reaches the engine.
namespace limits {
constexpr std::int64_t kMaxGpus = 1000000;  // GPUs in a cluster or a plan
constexpr std::int64_t kMaxNodes = 1000000;
constexpr std::int64_t kMaxGpusPerNode = 1024;  // an NVL576 rack still fits
constexpr std::int64_t kMaxNicsPerNode = 1024;
constexpr std::int64_t kMaxLayers = 100000;
constexpr std::int64_t kMaxHiddenSize = 1000000;
constexpr std::int64_t kMaxHeads = 100000;
constexpr std::int64_t kMaxFfnHiddenSize = 10000000;
constexpr std::int64_t kMaxSeqLength = 10000000;
constexpr std::int64_t kMaxVocabSize = 1000000000;
constexpr std::int64_t kMaxMicroBatchSize = 1000000;
constexpr std::int64_t kMaxGlobalBatchSize = 1000000000;
constexpr std::int64_t kMaxMicrobatches = 10000000;
constexpr std::int64_t kMaxVirtualStages = 100000;
constexpr double kMaxLinkBandwidth = 100e12;  // bytes/s, NVLink or NIC: 100 TB/s
constexpr double kMaxMemoryBandwidth = 1e15;  // bytes/s: 1 PB/s
constexpr double kMaxGpuMemory = 100e12;      // bytes: 100 TB
constexpr double kMaxPeakFlops = 1e18;        // FLOP/s per GPU: 1 EFLOPS
constexpr double kMaxLatency = 1.0;           // s
constexpr double kMaxGemmHalfFlops = 1e18;    // FLOP
constexpr double kMaxOversubscription = 1000;
}  // namespace limits

// One problem found in a spec. `keys` are dotted setting paths, most specific first
// ("plan.data_parallel", then "plan.tensor_parallel"); the loader points the error at the
// first of them written in the user's files.
struct SpecIssue {
  std::vector<std::string> keys;
  std::string message;
};

// Returns the cross-field problems of a cluster (island size, GPU count limit, no peak).
std::vector<SpecIssue> cluster_issues(const ClusterSpec& cluster);

// Returns the cross-field problems of a model (heads divide hidden size, query groups divide
// heads, positive sizes).
std::vector<SpecIssue> model_issues(const ModelSpec& model);

// Returns the problems of a plan that do not involve its batch fields: GPU count,
// divisibility of heads, query groups and layers, schedule rules, precision. Requires
// tensor, pipeline and data to be resolved; batch fields may still be 0.
std::vector<SpecIssue> plan_layout_issues(const PlanSpec& plan, const ModelSpec& model,
                                          const ClusterSpec& cluster);

// Returns the problems of a fully resolved plan on `model` and `cluster`: GPU count,
// divisibility of heads, query groups, layers and batch, schedule rules, precision.
std::vector<SpecIssue> plan_issues(const PlanSpec& plan, const ModelSpec& model,
                                   const ClusterSpec& cluster);

// Throws ConfigError (cluster or model issue) or PlanError (plan issue) for the first
// problem of `scenario`, located by key only (no file positions). Use it for specs built in
// code; load_scenario already runs these checks.
void validate_scenario(const Scenario& scenario);

// Returns a*b, or -1 when the product overflows 64 bits (inputs must be >= 0).
std::int64_t checked_mul(std::int64_t a, std::int64_t b);

}  // namespace trident

#endif  // TRIDENT_CONFIG_CHECKS_H_
