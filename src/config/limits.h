// Upper bounds that catch absurd or hostile input (typos, unit mistakes, files built to
// exhaust memory) before it reaches the engine. Every refusal names the limit it hit.
#ifndef TRIDENT_CONFIG_LIMITS_H_
#define TRIDENT_CONFIG_LIMITS_H_

#include <cstdint>

namespace trident::limits {

// --- input files ----------------------------------------------------------------------------
constexpr std::int64_t kMaxInputBytes = 1 << 20;   // one YAML or JSON file: 1 MiB (yaml-cpp
                                                   // may hold ~130 bytes per input byte)
constexpr int kMaxNestingDepth = 64;               // maps and lists inside each other
constexpr std::int64_t kMaxInputNodes = 100000;    // values in one file, aliases expanded
constexpr std::int64_t kMaxProblemsPerFile = 100;  // `validate` stops listing after these
constexpr std::int64_t kMaxStringLength = 4096;    // a name or description

// --- fields ---------------------------------------------------------------------------------
constexpr std::int64_t kMaxGpus = 1000000;  // GPUs in a cluster or a plan
constexpr std::int64_t kMaxNodes = 1000000;
constexpr std::int64_t kMaxGpusPerNode = 1024;  // an NVL576 rack still fits
constexpr std::int64_t kMaxNicsPerNode = 1024;
// Switch planes per NIC (multi-plane fabrics split a port over 2, 4 or 8).
constexpr std::int64_t kMaxPlanes = 16;
constexpr std::int64_t kMaxIslandSize = 2048;  // GPUs in one NVLink domain (NVL576 fits)
constexpr std::int64_t kMaxLayers = 100000;
constexpr std::int64_t kMaxHiddenSize = 1000000;
constexpr std::int64_t kMaxHeads = 100000;
constexpr std::int64_t kMaxFfnHiddenSize = 10000000;
constexpr std::int64_t kMaxExperts = 100000;  // routed experts per MoE layer
constexpr std::int64_t kMaxSeqLength = 10000000;
constexpr std::int64_t kMaxVocabSize = 1000000000;
constexpr std::int64_t kMaxMicroBatchSize = 1000000;
constexpr std::int64_t kMaxGlobalBatchSize = 1000000000;
constexpr std::int64_t kMaxMicrobatches = 10000000;
constexpr std::int64_t kMaxVirtualStages = 100000;
constexpr std::int64_t kMaxGradBucketSize = 1000000000000;  // parameters: 10^12
constexpr double kMaxLinkBandwidth = 100e12;                // bytes/s, NVLink or NIC: 100 TB/s
constexpr double kMaxMemoryBandwidth = 1e15;                // bytes/s: 1 PB/s
constexpr double kMaxGpuMemory = 100e12;                    // bytes: 100 TB
constexpr double kMaxPeakFlops = 1e18;                      // FLOP/s per GPU: 1 EFLOPS
constexpr double kMaxLatency = 1.0;                         // s
constexpr double kMaxGemmHalfFlops = 1e18;                  // FLOP
constexpr double kMaxOversubscription = 1000;

// --- the size of one simulation (checks.h simulation_size_issues) ----------------------------
// SimGrid runs roughly 10^5 activities per second: 10^8 is about a quarter of an hour. Estimated
// for the actors the engine simulates (lowering/shortcuts.h simulation_activity_issues).
constexpr double kMaxSimActivities = 1e8;
// GPUs one simulation places on the platform: flows that share links are solved together, so
// time grows faster than linearly (65536 GPUs: about 40 s for one micro-batch).
constexpr std::int64_t kMaxSimulatedGpus = 131072;
// Simulated GPUs times NVLink-island size: the routes the platform holds.
constexpr std::int64_t kMaxPlatformRoutes = 20000000;
// Pipeline instructions of all stage programs: stages × (micro-batches × chunks × 2 + 4).
constexpr std::int64_t kMaxScheduleInstructions = 10000000;

}  // namespace trident::limits

#endif  // TRIDENT_CONFIG_LIMITS_H_
