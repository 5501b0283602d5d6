// Internal to the settings table (config/settings.h): the row builders, the limits its section
// files share, and the functions that build each part of the table (settings_*.cc).
#ifndef TRIDENT_CONFIG_SETTINGS_ROWS_H_
#define TRIDENT_CONFIG_SETTINGS_ROWS_H_

#include <string>
#include <vector>

#include "config/settings.h"
#include "core/units.h"

namespace trident {

// Lower limits of quantities: far below any part of that kind, far above rounding noise.
constexpr double kMinLinkBandwidth = 1e6;    // 1 MB/s
constexpr double kMinMemoryBandwidth = 1e9;  // 1 GB/s
constexpr double kMinGpuMemory = 1 << 20;    // 1 MiB
constexpr double kMinPeakFlops = 1e9;        // 1 GFLOPS
constexpr double kMinEfficiency = 1e-3;      // a fraction of peak or of link bandwidth
// Upper limits of links, just above any part of that kind, so that bytes written for bits
// (`400 GB/s` for a 400 Gb/s NIC) are caught: NICs reach 800 Gb/s today (ConnectX-8, XDR) and
// 1.6 Tb/s is announced; NVLink 5 gives 900 GB/s per GPU and direction, NVLink 6 1.8 TB/s.
constexpr double kMaxNicBandwidth = 200e9;    // 1.6 Tb/s
constexpr double kMaxNvlinkBandwidth = 2e12;  // 2 TB/s per direction
constexpr int kMaxSites = 64;                 // datacenters of one cluster (cluster.sites)

// Row builders: the kind and its range; modifiers below add the rest.
// Returns a row of `kind` with its key and doc.
Setting row(std::string key, SettingKind kind, std::string doc);
// Returns an integer row in [min, max].
Setting integer(std::string key, double min, double max, std::string doc);
// Returns a number row in [min, max].
Setting number(std::string key, double min, double max, std::string doc);
// Returns a quantity row of dimension `dim` in [min, max] (SI units).
Setting quantity(std::string key, Dimension dim, double min, double max, std::string doc);
// Returns a choice row among `names`.
Setting choice(std::string key, std::vector<std::string> names, std::string doc);
// Returns a bool row.
Setting boolean(std::string key, std::string doc);

// Returns `s` with the default `value` (as written in YAML).
Setting def(Setting s, std::string value);
// Returns `s` marked as a bandwidth quoted in bits.
Setting in_bits(Setting s);
// Returns `s` with `how` added to its "missing required key" message.
Setting hint(Setting s, std::string how);
// Returns `s` marked required.
Setting req(Setting s);
// Returns `s` with how it is derived when absent.
Setting derived(Setting s, std::string how);
// Returns `s` with the Megatron-LM argument; its name in snake case becomes an alias when it
// differs from the key ("--tensor-model-parallel-size" -> tensor_model_parallel_size). Flag
// pairs ("--bf16 / --fp16") give none.
Setting mg(Setting s, std::string megatron);
// Returns `s` with another name the key is read under (a recipe table's word for it).
Setting alias(Setting s, std::string name);
// Returns `s` with its Hugging Face config.json key.
Setting hf(Setting s, std::string name);

// The parts of the table after the scenario section; settings.cc appends them in this order.
// Appends `cluster`, cluster.host, cluster.gpu (clocks, peaks, efficiency) and the fabrics
// (cluster.nvlink, cluster.network, cluster.nccl): settings_cluster.cc.
void append_cluster_sections(std::vector<SettingSection>* out);
// Appends cluster.reliability, cluster.storage and cluster.stragglers:
// settings_reliability.cc.
void append_reliability_sections(std::vector<SettingSection>* out);
// Appends `model`: settings_model.cc.
void append_model_section(std::vector<SettingSection>* out);
// Appends `plan` and plan.stack: settings_plan.cc.
void append_plan_sections(std::vector<SettingSection>* out);
// Returns the rows of `plan` from expert parallelism on (MoE, CUDA graphs, activation offload,
// cost), in table order: settings_plan_moe.cc.
std::vector<Setting> plan_moe_rows();

}  // namespace trident

#endif  // TRIDENT_CONFIG_SETTINGS_ROWS_H_
