// The settings table (config/settings.h). Field limits come from config/limits.h; every
// quantity has a lower limit as well as an upper one, so a slipped exponent (`1e-300 GB/s`) is
// refused at load instead of stalling the engine.
#include "config/settings.h"

#include <cstdio>
#include <map>
#include <stdexcept>

#include "config/limits.h"
#include "config/stack.h"

namespace trident {
namespace {

// A time in seconds as the settings table writes a default ("31 us").
std::string microseconds_text(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g us", seconds * 1e6);
  return buf;
}

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

// Row builders: the kind and its range; modifiers below add the rest.
Setting row(std::string key, SettingKind kind, std::string doc) {
  Setting s;
  s.key = std::move(key);
  s.kind = kind;
  s.doc = std::move(doc);
  return s;
}
Setting integer(std::string key, double min, double max, std::string doc) {
  Setting s = row(std::move(key), SettingKind::kInteger, std::move(doc));
  s.min = min;
  s.max = max;
  return s;
}
Setting number(std::string key, double min, double max, std::string doc) {
  Setting s = row(std::move(key), SettingKind::kNumber, std::move(doc));
  s.min = min;
  s.max = max;
  return s;
}
Setting quantity(std::string key, Dimension dim, double min, double max, std::string doc) {
  Setting s = row(std::move(key), SettingKind::kQuantity, std::move(doc));
  s.dimension = dim;
  s.min = min;
  s.max = max;
  return s;
}
Setting choice(std::string key, std::vector<std::string> names, std::string doc) {
  Setting s = row(std::move(key), SettingKind::kChoice, std::move(doc));
  s.choices = std::move(names);
  return s;
}
Setting boolean(std::string key, std::string doc) {
  return row(std::move(key), SettingKind::kBool, std::move(doc));
}

Setting def(Setting s, std::string value) {
  s.default_value = std::move(value);
  return s;
}
Setting in_bits(Setting s) {
  s.quoted_in_bits = true;
  return s;
}
Setting hint(Setting s, std::string how) {
  s.missing_hint = std::move(how);
  return s;
}
Setting req(Setting s) {
  s.required = true;
  return s;
}
Setting derived(Setting s, std::string how) {
  s.derived = std::move(how);
  return s;
}
// The Megatron-LM argument; its name in snake case becomes an alias when it differs from the
// key ("--tensor-model-parallel-size" -> tensor_model_parallel_size). Flag pairs ("--bf16 /
// --fp16") give none.
Setting mg(Setting s, std::string megatron) {
  s.megatron = std::move(megatron);
  if (s.megatron.rfind("--", 0) == 0 && s.megatron.find(' ') == std::string::npos) {
    std::string name = s.megatron.substr(2);
    for (char& c : name) c = c == '-' ? '_' : c;
    if (name != s.key) s.aliases.push_back(name);
  }
  return s;
}
// Another name the key is read under (a recipe table's word for it).
Setting alias(Setting s, std::string name) {
  s.aliases.push_back(std::move(name));
  return s;
}
Setting hf(Setting s, std::string name) {
  s.hugging_face = std::move(name);
  return s;
}

// Failure rates and checkpoint storage for `trident goodput` (docs/goodput.md). Defaults: the
// Llama 3 405B run, 466 interruptions in 54 days (1296 h) on 16,384 H100 in 2,048 nodes (Dubey
// et al. 2024, "The Llama 3 Herd of Models", Table 5), turned into a mean time between failures
// per component: component-hours / interruptions of that cause.
void append_goodput_sections(std::vector<SettingSection>* out) {
  using D = Dimension;
  constexpr double kMaxMtbf = 1e13;  // s: ~300,000 years
  const auto mtbf = [&](const char* key, const char* value, const char* doc) {
    return def(quantity(key, D::kTime, 1, kMaxMtbf, doc), value);
  };
  const auto cost = [&](const char* key, const char* value, const char* doc) {
    return def(quantity(key, D::kTime, 0, 1e6, doc), value);
  };
  out->push_back(
      {"cluster.reliability",
       "Mean time between job-interrupting failures per component, and what a restart costs "
       "(docs/goodput.md). A job's components are counted from the cluster's shape.",
       {
           mtbf("gpu_mtbf", "108000 h",
                "Per GPU: faulty GPU, SRAM, system processor, thermal interface, silent data "
                "corruption (Llama 3: 148 + 19 + 17 + 6 + 6 = 196 in 21.2M GPU-hours)."),
           mtbf("hbm_mtbf", "295000 h", "Per GPU: HBM (Llama 3: 72 in 21.2M GPU-hours)."),
           mtbf("host_mtbf", "190000 h",
                "Per node: CPU, system memory, power supply, chassis, IO board, SSD (Llama 3: "
                "2 + 2 + 3 + 2 + 2 + 3 = 14 in 2.65M node-hours)."),
           mtbf("nic_mtbf", "3030000 h", "Per NIC (Llama 3: 7 in 21.2M NIC-hours)."),
           mtbf("switch_mtbf", "56900 h",
                "Per fabric switch (Llama 3: half of the 35 switch/cable interruptions over its "
                "768 switches, counted as docs/goodput.md says)."),
           mtbf("link_mtbf", "2430000 h",
                "Per fabric cable (the other half of the 35 over 32,768 cables)."),
           mtbf("software_mtbf", "337000 h",
                "Per GPU (rank): software bugs, NCCL watchdog timeouts, dependencies (Llama 3: "
                "54 + 7 + 2 = 63 in 21.2M GPU-hours)."),
           mtbf("unplanned_maintenance_mtbf", "82900 h",
                "Per node: unplanned host maintenance (Llama 3: 32 in 2.65M node-hours)."),
           mtbf("planned_maintenance_mtbf", "56500 h",
                "Per node: planned interruptions, firmware upgrades and operator changes, which "
                "save a checkpoint first and lose no work (Llama 3: 47 in 2.65M node-hours)."),
           cost("detection", "2 min",
                "From a failure to the job being stopped: most failures crash a process at once; "
                "hangs wait for the NCCL watchdog (PyTorch's default timeout: 10 min)."),
           cost("scheduling", "3 min",
                "Requeue, replace or drain the failed node and allocate the job again."),
           cost("process_start", "2 min",
                "Container and Python start, imports, CUDA context, dataloader workers."),
           cost("nccl_init_per_gpu", "5 ms",
                "Communicator set-up grows with the ranks (NCCL's bootstrap all-gathers every "
                "rank's address): this much per GPU of the job (82 s at 16,384)."),
       }});
  out->push_back(
      {"cluster.storage",
       "The file system checkpoints are written to and read from (docs/goodput.md).",
       {
           def(quantity("write_bandwidth_per_node", D::kBandwidth, kMinLinkBandwidth,
                        limits::kMaxMemoryBandwidth,
                        "Checkpoint write bandwidth of one node: its storage NICs (DGX H100: two "
                        "200 Gb/s ports) at what a parallel file system sustains per client."),
               "20 GB/s"),
           def(quantity("read_bandwidth_per_node", D::kBandwidth, kMinLinkBandwidth,
                        limits::kMaxMemoryBandwidth, "Checkpoint read bandwidth of one node."),
               "40 GB/s"),
           def(quantity("write_bandwidth", D::kBandwidth, kMinLinkBandwidth,
                        limits::kMaxMemoryBandwidth,
                        "Aggregate write cap of the file system (Llama 3's Tectonic: 2 TB/s "
                        "sustained over 7,500 servers)."),
               "2 TB/s"),
           def(quantity("read_bandwidth", D::kBandwidth, kMinLinkBandwidth,
                        limits::kMaxMemoryBandwidth,
                        "Aggregate read cap (Llama 3's Tectonic: 7 TB/s peak)."),
               "7 TB/s"),
       }});
}

std::vector<SettingSection> build_sections() {
  using D = Dimension;
  using K = SettingKind;
  std::vector<SettingSection> out;
  out.push_back(
      {"",
       "The scenario file: a cluster, a model and a plan (each inline or a reference), plus "
       "optional overrides and sweep axes.",
       {
           row("name", K::kString, "Scenario name, shown in reports."),
           row("description", K::kString, "Free text for people."),
           req(row("cluster", K::kMap,
                   "The cluster: a shipped name's file path, a path relative to this file, or an "
                   "inline map (section `cluster`).")),
           req(row("model", K::kMap,
                   "The model: a path to a model YAML file or a Hugging Face config.json "
                   "(`hf:` prefix or `.json`), or an inline map (section `model`).")),
           req(row("plan", K::kMap,
                   "The parallel plan: a path or an inline map (section `plan`).")),
           row("overrides", K::kMap,
               "Settings applied after references are loaded, as `--set` does: dotted key paths "
               "to values, e.g. `plan.tensor_parallel: 4`."),
           row("sweep", K::kMap,
               "Axes for `trident sweep`: dotted key paths to non-empty lists of values."),
           row("search", K::kMap,
               "For `trident plan`: searched plan keys, each pinned to one value "
               "(`plan.schedule: 1f1b`, as --fix) or limited to a list (`plan.tensor_parallel: "
               "[4, 8]`, as --vary); docs/plan.md."),
       }});
  out.push_back(
      {"cluster",
       "GPU nodes joined by NVLink islands and an inter-island network.",
       {
           req(row("name", K::kString, "Cluster name, shown in reports.")),
           req(row("gpu", K::kMap,
                   "The GPU: a path to a GPU file (configs/gpus/) or an inline map (section "
                   "`cluster.gpu`).")),
           req(integer("nodes", 1, limits::kMaxNodes, "Nodes in the cluster.")),
           req(integer("gpus_per_node", 1, limits::kMaxGpusPerNode, "GPUs per node.")),
           req(row("nvlink", K::kMap, "The NVLink islands (section `cluster.nvlink`).")),
           req(row("network", K::kMap, "The network between islands (section `cluster.network`).")),
           row("nccl", K::kMap,
               "How collectives run: algorithm and protocol choice and their costs (section "
               "`cluster.nccl`, docs/collectives.md); absent: every default."),
           row("host", K::kMap,
               "The nodes' CPUs and their links to the GPUs (section `cluster.host`); needed by "
               "plan.optimizer_cpu_offload."),
           row("reliability", K::kMap,
               "Failure rates per component and restart costs (section `cluster.reliability`, "
               "docs/goodput.md); absent: every default (Llama 3's 16k-H100 fleet)."),
           row("storage", K::kMap,
               "Checkpoint storage bandwidth (section `cluster.storage`, docs/goodput.md); "
               "absent: every default."),
           row("stragglers", K::kMap,
               "Slow GPUs, degraded links and background traffic (section "
               "`cluster.stragglers`, docs/stragglers.md); absent: none."),
       }});
  // The host side of a node, for Megatron-Core's optimizer CPU offload (docs/memory.md,
  // "Optimizer CPU offload"): no defaults, so an offloaded plan names its machine's figures.
  out.push_back(
      {"cluster.host",
       "The CPUs of a node and their links to its GPUs (optimizer CPU offload).",
       {
           quantity("memory_bandwidth", D::kBandwidth, kMinMemoryBandwidth,
                    limits::kMaxMemoryBandwidth,
                    "Host DRAM bandwidth per node, all sockets (datasheet: channels × transfer "
                    "rate × 8 B); the node's GPUs share it for their CPU optimizer steps."),
           quantity("host_to_device_bandwidth", D::kBandwidth, kMinLinkBandwidth,
                    kMaxNvlinkBandwidth,
                    "Pinned host-to-device copy bandwidth per GPU (nvbandwidth "
                    "host_to_device_memcpy_ce): PCIe on x86 hosts, NVLink-C2C on Grace."),
           quantity("device_to_host_bandwidth", D::kBandwidth, kMinLinkBandwidth,
                    kMaxNvlinkBandwidth,
                    "Pinned device-to-host copy bandwidth per GPU (nvbandwidth "
                    "device_to_host_memcpy_ce)."),
       }});
  out.push_back(
      {"cluster.gpu",
       "One GPU: dense peaks, memory and the compute model's fitted parameters "
       "(docs/calibration.md).",
       {
           req(row("name", K::kString, "GPU name, shown in reports.")),
           def(choice("architecture", {"unspecified", "ampere", "hopper", "blackwell"},
                      "GPU generation (compute capability 8.0, 9.0, 10.0): decides what "
                      "attention_backend auto picks and whether fp8_recipe mxfp8 runs."),
               "unspecified"),
           req(row("peak_flops", K::kMap,
                   "Dense tensor-core peak per precision (section `cluster.gpu.peak_flops`); at "
                   "least one.")),
           req(quantity("memory", D::kBytes, kMinGpuMemory, limits::kMaxGpuMemory,
                        "HBM capacity per GPU.")),
           derived(quantity("memory_reserved", D::kBytes, 0, limits::kMaxGpuMemory,
                            "HBM that holds no model state, part of the fits-in-memory verdict; "
                            "given, it replaces the computed terms: the CUDA context (1.79 GiB "
                            "measured on H100), NCCL buffers of the plan's communicators, "
                            "Transformer Engine's userbuffers and GEMM workspaces "
                            "(docs/memory.md)."),
                   "computed from the plan"),
           req(quantity("memory_bandwidth", D::kBandwidth, kMinMemoryBandwidth,
                        limits::kMaxMemoryBandwidth, "HBM bandwidth per GPU (datasheet).")),
           row("efficiency", K::kMap,
               "Compute model parameters (section `cluster.gpu.efficiency`); absent: its "
               "defaults."),
           row("clocks", K::kMap,
               "Tensor-core clocks and board power (section `cluster.gpu.clocks`); absent: "
               "kernels inside a step run at the clock the peaks are quoted at."),
       }});
  // The clocks behind the peaks (docs/calibration.md, "Sustained clocks").
  out.push_back(
      {"cluster.gpu.clocks",
       "SM clocks: the datasheet peaks hold at `peak`, dense tensor-core work inside a training "
       "step runs at `sustained`, so tensor-core kernels in a step run at sustained / peak of "
       "the throughput the efficiency block gives.",
       {
           derived(quantity("peak", D::kFrequency, 1e8, 1e10,
                            "The clock the datasheet peak_flops are quoted at (SMs x FLOP per "
                            "clock x this clock = the peak); the efficiency block's fractions "
                            "are fractions of the peak at this clock."),
                   "none: no clock scaling"),
           derived(quantity("boost", D::kFrequency, 1e8, 1e10,
                            "Maximum (boost) SM clock, what short benchmarks run at."),
                   "none"),
           derived(quantity("sustained", D::kFrequency, 1e8, 1e10,
                            "The SM clock dense GEMMs settle at under the board power limit; "
                            "needs `peak`."),
                   "`peak`"),
           derived(quantity("power_limit", D::kPower, 1, 1e5,
                            "Board power limit the sustained clock belongs to."),
                   "none"),
       }});
  std::vector<Setting> peaks;
  for (const char* p : {"bf16", "fp16", "fp8", "tf32", "fp32", "fp4"}) {
    peaks.push_back(quantity(p, D::kFlopRate, kMinPeakFlops, limits::kMaxPeakFlops,
                             std::string("Dense ") + p + " tensor-core peak (datasheet)."));
  }
  out.push_back({"cluster.gpu.peak_flops",
                 "Dense peak FLOP rate per precision; a plan's `precision` needs its entry.",
                 std::move(peaks)});
  out.push_back(
      {"cluster.gpu.efficiency",
       "The compute model (workload/compute_model.h), fitted once per GPU type on measured "
       "kernels, never per scenario.",
       {
           def(number("gemm", kMinEfficiency, 1, "Fraction of peak that large GEMMs reach."),
               "0.75"),
           def(quantity("gemm_half_size", D::kFlops, 0, limits::kMaxGemmHalfFlops,
                        "GEMM size at which its efficiency is half of `gemm` (the size ramp)."),
               "2 GFLOP"),
           def(number("memory", kMinEfficiency, 1,
                      "Fraction of HBM bandwidth that memory-bound kernels reach."),
               "0.8"),
           def(number("in_training", 0.05, 1,
                      "16-bit GEMMs and fused attention inside a training step run at this "
                      "fraction of the isolated-kernel throughput the other fractions describe, "
                      "after the sustained clock (`cluster.gpu.clocks`) (1: they were fitted on "
                      "whole layers of a step; `trident kernel` shows isolated kernels). Fitted "
                      "on published end-to-end runs by scripts/fit_end_to_end.py."),
               "1"),
           def(quantity("kernel_overhead", D::kTime, 0, limits::kMaxLatency,
                        "Fixed cost per kernel (launch and tail)."),
               "0 s"),
           derived(integer("sm_count", 1, 100000,
                           "Streaming multiprocessors: GEMMs run in waves of 128×128 output "
                           "tiles over them."),
                   "none: no wave quantization"),
           row("fused_attention", K::kMap,
               "cuDNN fused attention at 16 bits (section "
               "`cluster.gpu.efficiency.fused_attention`)."),
           row("flash_attention", K::kMap,
               "FlashAttention at 16 bits (section `cluster.gpu.efficiency.flash_attention`)."),
           row("flash2_attention", K::kMap,
               "FlashAttention-2 at 16 bits as PyTorch SDPA runs it (section "
               "`cluster.gpu.efficiency.flash2_attention`, backend flash2); absent: the "
               "flash_attention block."),
           row("fp8", K::kMap,
               "GEMM and attention parameters in FP8 (section `cluster.gpu.efficiency.fp8`); "
               "absent: the 16-bit ones."),
           row("fp4", K::kMap,
               "GEMM and attention parameters in FP4 (section `cluster.gpu.efficiency.fp4`); "
               "absent: the 16-bit ones."),
       }});
  for (const char* precision : {"fp8", "fp4"}) {
    const std::string path = std::string("cluster.gpu.efficiency.") + precision;
    const std::string same = "the 16-bit value";
    out.push_back(
        {path,
         std::string("The compute model's GEMM and attention parameters in ") + precision +
             ", as fractions of the " + precision +
             " peak; a key not written takes the 16-bit "
             "block's value.",
         {
             derived(number("gemm", kMinEfficiency, 1, "Fraction of peak large GEMMs reach."),
                     same),
             derived(quantity("gemm_half_size", D::kFlops, 0, limits::kMaxGemmHalfFlops,
                              "GEMM size at which efficiency is half of `gemm`."),
                     same),
             derived(number("in_training", 0.05, 1,
                            "Tensor-core kernels at this precision inside a training step run "
                            "at this fraction of their isolated throughput."),
                     same),
             row("fused_attention", K::kMap, "cuDNN fused attention at this precision."),
             row("flash_attention", K::kMap, "FlashAttention at this precision."),
         }});
  }
  // The attention kernel model (workload/compute_model.h), at 16 bits and per precision.
  for (const char* block : {"", ".fp8", ".fp4"}) {
    for (const char* kernel : {"fused_attention", "flash_attention"}) {
      const bool top = std::string(block).empty();
      const std::string path = std::string("cluster.gpu.efficiency") + block + "." + kernel;
      const auto value = [&](Setting s, const char* fixed) {
        return top ? def(std::move(s), fixed) : derived(std::move(s), "the 16-bit block's");
      };
      out.push_back(
          {path,
           std::string("Throughput of one ") +
               (std::string(kernel) == "fused_attention" ? "cuDNN fused-attention"
                                                         : "FlashAttention") +
               " kernel per pass: peak × efficiency × head-dim ramp × sequence ramp × causal "
               "factor × SM waves (docs/calibration.md).",
           {
               value(number("forward", kMinEfficiency, 1,
                            "Forward: fraction of peak at head dim 128, long sequences, no mask."),
                     "0.5"),
               value(number("backward", kMinEfficiency, 1,
                            "Backward (2.5 × forward FLOPs): the same fraction."),
                     "0.4"),
               value(number("half_seq", 0, 1e7,
                            "Forward: sequence length (tokens) at which the ramp is at half."),
                     "256"),
               value(number("backward_half_seq", 0, 1e7,
                            "Backward: sequence length at which the ramp is at half."),
                     "512"),
               value(number("causal_seq", 0, 1e7,
                            "Causal mask: the diagonal tiles cost s / (s + causal_seq)."),
                     "256"),
               value(
                   number("half_head_dim", 0, 1e7, "Head dimension at which the ramp is at half."),
                   "64"),
           }});
    }
  }
  out.push_back(
      {"cluster.gpu.efficiency.flash2_attention",
       "Throughput of one FlashAttention-2 kernel per pass (PyTorch scaled_dot_product_attention's "
       "flash backend), as for flash_attention; a key not written takes flash_attention's value.",
       {
           derived(number("forward", kMinEfficiency, 1,
                          "Forward: fraction of peak at head dim 128, long sequences, no mask."),
                   "flash_attention's"),
           derived(number("backward", kMinEfficiency, 1,
                          "Backward (2.5 × forward FLOPs): the same fraction."),
                   "flash_attention's"),
           derived(number("half_seq", 0, 1e7,
                          "Forward: sequence length (tokens) at which the ramp is at half."),
                   "flash_attention's"),
           derived(number("backward_half_seq", 0, 1e7,
                          "Backward: sequence length at which the ramp is at half."),
                   "flash_attention's"),
           derived(number("causal_seq", 0, 1e7,
                          "Causal mask: the diagonal tiles cost s / (s + causal_seq)."),
                   "flash_attention's"),
           derived(number("half_head_dim", 0, 1e7, "Head dimension at which the ramp is at half."),
                   "flash_attention's"),
       }});
  Setting in_switch = def(number("in_switch_reduction_efficiency", kMinEfficiency, 1,
                                 "In-switch reduction (NVLink SHARP, NCCL's NVLS): all-reduces "
                                 "inside an island run at this fraction of link bandwidth; 0: "
                                 "none, rings are used."),
                          "0");
  in_switch.zero_allowed = true;
  out.push_back(
      {"cluster.nvlink",
       "NVLink islands: GPUs joined by NVSwitch, one full-duplex link per GPU.",
       {
           derived(integer("island_size", 1, limits::kMaxIslandSize,
                           "GPUs per island; a multiple or divisor of gpus_per_node (72 for an "
                           "NVL72 rack)."),
                   "gpus_per_node"),
           req(quantity("bandwidth", D::kBandwidth, kMinLinkBandwidth, kMaxNvlinkBandwidth,
                        "Per GPU, per direction.")),
           req(quantity("latency", D::kTime, 0, limits::kMaxLatency, "GPU to GPU.")),
           def(number("protocol_efficiency", kMinEfficiency, 1,
                      "Achieved fraction of link bandwidth for bulk transfers (NCCL protocol)."),
               "1"),
           in_switch,
       }});
  out.push_back(
      {"cluster.network",
       "The network between NVLink islands. GPU i of a node uses NIC i mod nics_per_node.",
       {
           def(choice("topology", {"single-switch", "fat-tree", "rail-optimized"},
                      "One non-blocking switch, a fat tree of leaf groups, or rail-optimized: NIC "
                      "i of every node on rail i, one rail switch per rail and leaf group, a "
                      "spine above (docs/fabrics.md)."),
               "fat-tree"),
           derived(integer("nics_per_node", 1, limits::kMaxNicsPerNode, "NICs per node."),
                   "gpus_per_node"),
           req(in_bits(quantity("nic_bandwidth", D::kBandwidth, kMinLinkBandwidth, kMaxNicBandwidth,
                                "Per NIC, per direction (`400 Gbps` is bits, `50 GB/s` bytes)."))),
           req(quantity("latency", D::kTime, 0, limits::kMaxLatency,
                        "GPU to GPU across the fabric.")),
           def(number("oversubscription", 1, limits::kMaxOversubscription,
                      "Fat tree: leaf downlink / uplink capacity ratio (1: non-blocking)."),
               "1"),
           def(integer("nodes_per_leaf", 1, limits::kMaxNodes,
                       "Fat tree: nodes below one leaf switch group."),
               "16"),
           def(number("protocol_efficiency", kMinEfficiency, 1,
                      "Achieved fraction of NIC bandwidth for bulk transfers."),
               "1"),
           def(boolean("pxn",
                       "Rail-optimized: a transfer to another rail first crosses NVLink to the "
                       "sender's node-mate on the receiver's rail (NCCL's PXN); false: it "
                       "crosses the spine."),
               "true"),
           def(integer("planes", 1, limits::kMaxPlanes,
                       "Independent switch planes each NIC's bandwidth is split over (each plane "
                       "a copy of the fabric at nic_bandwidth / planes); flows spread evenly."),
               "1"),
           def(integer("tiers", 2, 3,
                       "Fat tree: switch tiers, 2 (leaf, spine) or 3 (leaf, spine, core: pods of "
                       "nodes_per_pod nodes)."),
               "2"),
           integer("nodes_per_pod", 1, limits::kMaxNodes,
                   "Fat tree of 3 tiers: nodes in one pod (whole leaf groups); required there."),
           def(number("pod_oversubscription", 1, limits::kMaxOversubscription,
                      "Fat tree of 3 tiers: a pod's spine downlink / core uplink capacity ratio "
                      "(the taper of the second tier; 1: non-blocking)."),
               "1"),
       }});
  // NCCL's cost model (NVIDIA/nccl src/graph/tuning.cc: baseLat, hwLat, protocol bandwidth
  // factors). Defaults add no latency beyond the routes', so Simple rings run as before the
  // model existed; the shipped clusters carry values fitted by scripts/fit_collectives.py.
  const auto latency = [](const char* key, const char* doc) {
    return def(quantity(key, D::kTime, 0, limits::kMaxLatency, doc), "0 us");
  };
  out.push_back(
      {"cluster.nccl",
       "Collective algorithms and protocols as NCCL's tuning chooses them (docs/collectives.md).",
       {
           def(choice("algorithm", {"auto", "ring", "tree", "nvls", "nvls_tree"},
                      "Like NCCL_ALGO: auto picks the fastest by the cost model per collective; "
                      "a forced one applies where it can (tree and nvls_tree: multi-island "
                      "all-reduce; nvls: single-island all-reduce), else the ring."),
               "auto"),
           def(choice("protocol", {"auto", "ll", "ll128", "simple"},
                      "Like NCCL_PROTO: auto picks the fastest; NVLS runs Simple only."),
               "auto"),
           latency("ll_latency", "LL: launch latency of a collective (NCCL baseLat)."),
           latency("ll128_latency", "LL128: launch latency of a collective."),
           latency("simple_latency", "Simple: launch latency of a collective."),
           latency("ll_step_latency",
                   "LL: latency per ring step or tree level beyond the route's (NCCL hwLat)."),
           latency("ll128_step_latency", "LL128: latency per step beyond the route's."),
           latency("simple_step_latency", "Simple: latency per step beyond the route's."),
           def(number("ll_bandwidth", kMinEfficiency, 1,
                      "LL: fraction of the Simple protocol's bandwidth (NCCL: 1/4 for rings)."),
               "0.25"),
           def(number("ll128_bandwidth", kMinEfficiency, 1,
                      "LL128: fraction of the Simple protocol's bandwidth (NCCL: 120/128)."),
               "0.92"),
           def(number("tree_bandwidth", kMinEfficiency, 1,
                      "Tree and NVLS-tree: fraction of the link bandwidth their inter-island "
                      "part reaches (NCCL: 0.9)."),
               "0.9"),
           latency("nvls_latency", "NVLS and NVLS-tree: launch latency of a collective."),
           def(quantity("pipeline_chunk", D::kBytes, 1024, 1e12,
                        "Chunk of a hierarchical collective: its intra- and inter-island "
                        "phases overlap chunk by chunk."),
               "4 MiB"),
       }});
  append_goodput_sections(&out);
  // Stragglers (docs/stragglers.md): every default means none, and the step is as without them.
  const auto fraction = [](const char* key, const char* doc) {
    return def(number(key, kMinEfficiency, 1, doc), "1");
  };
  const auto rank = [](const char* key, const char* doc) {
    return def(integer(key, 0, limits::kMaxGpus - 1, doc), "0");
  };
  out.push_back(
      {"cluster.stragglers",
       "GPUs and links slower than their peers; the slowest rank sets the pace of every "
       "collective and pipeline edge it is on.",
       {
           fraction("gpu_clock_fraction",
                    "Clock of each slow GPU as a fraction of its peers' (thermal or power "
                    "throttling): its kernels, HBM-bound ones included, take 1 / fraction as "
                    "long."),
           rank("gpu_rank",
                "The first slow GPU: its index, node by node (the global rank unless "
                "plan.gpus_per_island leaves GPUs out)."),
           def(integer("gpu_count", 1, limits::kMaxGpus,
                       "Slow GPUs: from gpu_rank, spaced (GPUs the plan spans / gpu_count) apart."),
               "1"),
           fraction("nvlink_fraction",
                    "Bandwidth of one GPU's NVLink (both directions) as a fraction of nominal."),
           rank("nvlink_rank", "Global rank of the GPU whose NVLink is degraded."),
           fraction("nic_fraction",
                    "Bandwidth of one NIC (both directions) as a fraction of nominal."),
           rank("nic_rank", "Global rank of a GPU that uses the degraded NIC."),
           def(number("background_traffic", 0, 0.99,
                      "Fraction of each inter-node fabric link's capacity (NICs and leaf "
                      "uplinks) that other jobs' traffic takes."),
               "0"),
       }});
  out.push_back(
      {"model",
       "A decoder-only transformer; field names follow Megatron-LM, and a Hugging Face "
       "config.json is read through the names shown.",
       {
           req(row("name", K::kString, "Model name, shown in reports.")),
           hf(mg(req(integer("num_layers", 1, limits::kMaxLayers, "Transformer layers.")),
                 "--num-layers"),
              "num_hidden_layers"),
           hf(mg(req(integer("hidden_size", 1, limits::kMaxHiddenSize, "Model width h.")),
                 "--hidden-size"),
              "hidden_size"),
           hf(mg(req(integer("num_attention_heads", 1, limits::kMaxHeads, "Attention heads a.")),
                 "--num-attention-heads"),
              "num_attention_heads"),
           hf(mg(derived(integer("num_query_groups", 1, limits::kMaxHeads,
                                 "Key/value heads (grouped-query attention)."),
                         "num_attention_heads"),
                 "--num-query-groups"),
              "num_key_value_heads"),
           hf(mg(derived(integer("ffn_hidden_size", 1, limits::kMaxFfnHiddenSize,
                                 "MLP width (required with swiglu)."),
                         "4 × hidden_size"),
                 "--ffn-hidden-size"),
              "intermediate_size"),
           mg(hint(req(integer("seq_length", 1, limits::kMaxSeqLength,
                               "Training sequence length s.")),
                   "the training sequence length; a Hugging Face config.json has only the context "
                   "window (max_position_embeddings), so give it with --set model.seq_length=N or "
                   "in the scenario's overrides: (model.seq_length: N)"),
              "--seq-length"),
           hf(mg(req(integer("vocab_size", 1, limits::kMaxVocabSize, "Vocabulary size V.")),
                 "--vocab-size"),
              "vocab_size"),
           mg(def(boolean("swiglu", "Gated MLP with three weight matrices (Llama)."), "false"),
              "--swiglu"),
           mg(def(choice("position_embedding", {"learned", "learned_absolute", "rope", "alibi"},
                         "Learned absolute positions (an s×h table; Megatron-LM's "
                         "learned_absolute) or none in weights (rope, alibi)."),
                  "learned"),
              "--position-embedding-type"),
           hf(mg(def(boolean("untie_embeddings_and_output_weights",
                             "Separate output (logits) matrix instead of the word embeddings."),
                     "false"),
                 "--untie-embeddings-and-output-weights"),
              "tie_word_embeddings (negated)"),
           hf(mg(def(number("attention_dropout", 0, 1,
                            "Dropout on the attention probabilities; its kernels and masks run "
                            "only when > 0 (Llama-family models train without)."),
                     "0.1"),
                 "--attention-dropout"),
              "attention_dropout / attn_pdrop"),
           hf(mg(def(number("hidden_dropout", 0, 1,
                            "Dropout on the attention and MLP outputs and the embeddings."),
                     "0.1"),
                 "--hidden-dropout"),
              "hidden_dropout / resid_pdrop"),
           hf(mg(def(choice("normalization", {"LayerNorm", "RMSNorm"},
                            "Layer norm type (RMSNorm has no bias, no mean)."),
                     "LayerNorm"),
                 "--normalization"),
              "rms_norm_eps → RMSNorm"),
           hf(mg(derived(integer("kv_channels", 1, limits::kMaxHiddenSize,
                                 "Dimension of one attention head (Qwen3: 128 at hidden 2048 "
                                 "with 32 heads)."),
                         "hidden_size / num_attention_heads"),
                 "--kv-channels"),
              "head_dim"),
           // Megatron-Core TransformerConfig.add_bias_linear (transformer_config.py; the flag
           // --disable-bias-linear turns it off): biases on QKV, the attention projection and
           // both MLP matrices, routed experts included.
           mg(derived(boolean("add_bias_linear",
                              "Biases on the linear layers (QKV, attention projection, FC1, FC2, "
                              "the routed experts'): their parameters, gradients and optimizer "
                              "state; the bias adds run inside the GEMM epilogues and the fused "
                              "bias-dropout-add, so no kernel of their own. Megatron's default is "
                              "true; Llama-style recipes pass --disable-bias-linear."),
                      "biases on dense GPT-style layers; none with swiglu, none on experts"),
              "--disable-bias-linear (negated)"),
           mg(def(boolean("qk_layernorm",
                          "A norm (the model's normalization) on each head of Q and K after "
                          "the QKV projection (Qwen3, OLMo 2): its kernels, weights and the "
                          "activations it keeps."),
                  "false"),
              "--qk-layernorm"),
           mg(def(integer("rotary_base", 1, 1e12,
                          "RoPE base θ: which angles rotate Q and K, not how much work "
                          "(same kernels, same bytes)."),
                  "10000"),
              "--rotary-base"),
           mg(def(number("rotary_scaling_factor", 1, 1e6,
                         "RoPE frequency scaling (Llama 3.1 scaling, DeepSeek YaRN: 40): "
                         "changes the angles, not the work."),
                  "1"),
              "--rotary-scaling-factor"),
           // Mixture of experts (Megatron-Core megatron/core/transformer/moe/).
           hf(mg(derived(integer("num_experts", 1, limits::kMaxExperts,
                                 "Routed experts per MoE layer."),
                         "none: every MLP is dense"),
                 "--num-experts"),
              "num_local_experts / num_experts / n_routed_experts"),
           hf(mg(def(integer("moe_router_topk", 1, limits::kMaxExperts,
                             "Experts each token is routed to."),
                     "2"),
                 "--moe-router-topk"),
              "num_experts_per_tok"),
           hf(mg(derived(integer("moe_router_num_groups", 1, limits::kMaxExperts,
                                 "Group-limited routing: the experts split into this many "
                                 "equal groups of consecutive experts, and each token picks "
                                 "moe_router_group_topk groups before its top-k experts "
                                 "(DeepSeek-V3: 8, one per node at EP 64)."),
                         "none: no group limit"),
                 "--moe-router-num-groups"),
              "n_group"),
           hf(mg(derived(integer("moe_router_group_topk", 1, limits::kMaxExperts,
                                 "Groups each token's experts are picked from, with "
                                 "moe_router_num_groups (DeepSeek-V3: 4)."),
                         "none: no group limit"),
                 "--moe-router-group-topk"),
              "topk_group"),
           // Router details (megatron/core/transformer/moe/router.py TopKRouter,
           // moe_utils.py topk_routing_with_score_function): they decide which experts a token
           // picks and with what weight, not how many tokens move or how much the kernels do;
           // trident routes balanced (plus plan.moe_expert_load_imbalance) whatever the scores.
           mg(def(boolean("moe_router_pre_softmax",
                          "Softmax (or sigmoid) before the top-k instead of after: the same "
                          "T × E scores read, the same traffic."),
                  "false"),
              "--moe-router-pre-softmax"),
           mg(def(choice("moe_router_score_function", {"softmax", "sigmoid", "sqrtsoftplus"},
                         "Routing score function (DeepSeek-V3: sigmoid): an element-wise "
                         "function of the same T × E scores, the same traffic."),
                  "softmax"),
              "--moe-router-score-function"),
           mg(number("moe_router_topk_scaling_factor", 1e-6, 1e6,
                     "Scales the routing weights of the top-k experts (DeepSeek-V3: 2.5), "
                     "not the traffic. Absent: no scaling."),
              "--moe-router-topk-scaling-factor"),
           mg(def(boolean("moe_router_enable_expert_bias",
                          "Aux-loss-free balancing: a per-expert bias added to the scores before "
                          "the top-k (E fp32 numbers per layer, a buffer outside the optimizer); "
                          "needs moe_router_score_function sigmoid or sqrtsoftplus. Routing "
                          "imbalance is plan.moe_expert_load_imbalance."),
                  "false"),
              "--moe-router-enable-expert-bias"),
           hf(mg(derived(integer("moe_ffn_hidden_size", 1, limits::kMaxFfnHiddenSize,
                                 "Width of one routed expert's MLP."),
                         "ffn_hidden_size"),
                 "--moe-ffn-hidden-size"),
              "moe_intermediate_size"),
           hf(mg(derived(
                     integer("moe_shared_expert_intermediate_size", 1, limits::kMaxFfnHiddenSize,
                             "Width of the shared expert every token visits (all shared "
                             "experts together)."),
                     "none: no shared expert"),
                 "--moe-shared-expert-intermediate-size"),
              "shared_expert_intermediate_size / n_shared_experts × moe_intermediate_size"),
           hf(mg(def(row("moe_layer_freq", K::kList,
                         "Which layers are MoE: an integer N (layers 0, N, 2N, ...) or a list "
                         "of 0/1, one per layer."),
                     "1"),
                 "--moe-layer-freq"),
              "decoder_sparse_step / moe_layer_freq / interleave_moe_layer_step"),
           hf(def(integer("first_k_dense_replace", 0, limits::kMaxLayers,
                          "The first k layers keep a dense MLP (DeepSeek; Megatron writes it "
                          "into --moe-layer-freq as [0]*k+[1]*(L-k))."),
                  "0"),
              "first_k_dense_replace"),
           // Multi-latent attention (Megatron-Core multi_latent_attention.py).
           mg(def(boolean("multi_latent_attention",
                          "DeepSeek multi-latent attention: low-rank query and key/value "
                          "projections, rotary dimensions apart."),
                  "false"),
              "--multi-latent-attention"),
           hf(mg(derived(integer("q_lora_rank", 1, limits::kMaxHiddenSize,
                                 "Rank of the query's low-rank projection."),
                         "none: queries projected directly"),
                 "--q-lora-rank"),
              "q_lora_rank"),
           hf(mg(def(integer("kv_lora_rank", 1, limits::kMaxHiddenSize,
                             "Rank of the shared key/value latent."),
                     "32"),
                 "--kv-lora-rank"),
              "kv_lora_rank"),
           hf(mg(def(integer("qk_head_dim", 1, limits::kMaxHiddenSize,
                             "Query/key dimensions per head without rotary embedding."),
                     "128"),
                 "--qk-head-dim"),
              "qk_nope_head_dim"),
           hf(mg(def(integer("qk_pos_emb_head_dim", 1, limits::kMaxHiddenSize,
                             "Rotary query/key dimensions per head (the key's are shared by all "
                             "heads)."),
                     "64"),
                 "--qk-pos-emb-head-dim"),
              "qk_rope_head_dim"),
           hf(mg(def(integer("v_head_dim", 1, limits::kMaxHiddenSize, "Value dimensions per head."),
                     "128"),
                 "--v-head-dim"),
              "v_head_dim"),
           // Multi-token prediction (Megatron-Core multi_token_prediction.py; docs/moe.md).
           hf(mg(derived(integer("mtp_num_layers", 0, limits::kMaxLayers,
                                 "Multi-token-prediction depths after the decoder (DeepSeek-V3: "
                                 "1), each one more transformer layer of the last layer's kind, "
                                 "a 2h x h projection and its own logits and loss, on the last "
                                 "pipeline stage unless the layout's 'm' places them."),
                         "none (0): no multi-token prediction"),
                 "--mtp-num-layers"),
              "num_nextn_predict_layers"),
           mg(def(number("mtp_loss_scaling_factor", 0, 1e6,
                         "Weight of the multi-token-prediction loss; changes no time or memory "
                         "(accepted for launch lines that give it)."),
                  "0.1"),
              "--mtp-loss-scaling-factor"),
           // Local attention (docs/attention.md): Megatron-Core TransformerConfig.window_size,
           // window_attn_skip_freq and no_rope_freq; Hugging Face Llama 4's chunked attention.
           hf(mg(derived(row("window_size", K::kList,
                             "Sliding-window attention [L, R]: query i attends keys i - L .. i "
                             "(L + 1 keys; the causal mask drops R, 0 or -1); L -1: no window."),
                         "none: every layer attends its whole causal prefix"),
                 "--window-size"),
              "sliding_window"),
           hf(mg(derived(row("window_attn_skip_freq", K::kList,
                             "Which layers keep full attention beside window_size: an integer N "
                             "(layers N, 2N, ... counted from 1; gpt-oss: 2) or a list of 0/1 "
                             "per layer, 1 where the layer uses the window."),
                         "none: every layer uses the window"),
                 "--window-attn-skip-freq"),
              "layer_types"),
           hf(derived(integer("attention_chunk_size", 1, 1e9,
                              "Chunked attention (Llama 4: 8192): a RoPE layer's query attends "
                              "only the keys of its own chunk; need not divide seq_length (the "
                              "last chunk is shorter)."),
                      "none: no chunked attention"),
              "attention_chunk_size"),
           hf(mg(derived(row("no_rope_freq", K::kList,
                             "Layers without RoPE (Llama 4's global NoPE layers, which chunked "
                             "attention leaves whole): an integer N (every Nth layer, counted "
                             "from 1; must divide num_layers) or a list of 0/1, 1 = no RoPE."),
                         "none: RoPE on every layer"),
                 "--no-rope-freq"),
              "no_rope_layers"),
       }});
  out.push_back(
      {"plan",
       "The parallel plan: tensor × pipeline × data parallel GPUs, batch, schedule and "
       "Megatron-LM's memory and overlap options.",
       {
           mg(def(integer("tensor_parallel", 1, limits::kMaxGpus,
                          "Tensor-parallel size t: each layer's matrices split over t GPUs."),
                  "1"),
              "--tensor-model-parallel-size"),
           mg(def(integer("pipeline_parallel", 1, limits::kMaxGpus,
                          "Pipeline-parallel size p: the layers split into p stages."),
                  "1"),
              "--pipeline-model-parallel-size"),
           mg(def(integer("context_parallel", 1, limits::kMaxGpus,
                          "Context-parallel size cp: each sequence split over cp GPUs "
                          "(2 × cp chunks for causal load balance); attention passes keys "
                          "and values between them."),
                  "1"),
              "--context-parallel-size"),
           mg(def(choice("cp_comm_type", {"p2p", "all_gather", "a2a"},
                         "Context-parallel attention: p2p passes K/V blocks around the CP ring, "
                         "each transfer overlapped with an attention block (Transformer "
                         "Engine's AttnFuncWithCPAndKVP2P); all_gather gathers K/V before "
                         "attention (AttnFuncWithCPAndKVAllGather; under cp_implementation "
                         "torch, torchtitan's rotate method allgather); a2a exchanges Q, K, V "
                         "and the output all-to-all so each rank attends the whole sequence "
                         "for heads / cp (AttnFuncWithCPAndQKVOA2A, DeepSpeed-Ulysses)."),
                  "p2p"),
              "--cp-comm-type"),
           derived(choice("cp_implementation", {"transformer_engine", "torch"},
                          "Whose context-parallel attention runs: transformer_engine "
                          "(Megatron-Core), or torch, PyTorch's context_parallel as torchtitan "
                          "calls it (fp32 merges of the partial outputs, fp32 dK/dV, K/V with "
                          "every query head: torchtitan repeats K/V heads before SDPA); "
                          "docs/context-parallel.md."),
                   "the stack's context_parallel (torch under torchtitan)"),
           derived(integer("data_parallel", 1, limits::kMaxGpus, "Data-parallel size d."),
                   "cluster GPUs / (tensor_parallel × context_parallel × pipeline_parallel)"),
           mg(req(integer("micro_batch_size", 1, limits::kMaxMicroBatchSize,
                          "Sequences per micro-batch.")),
              "--micro-batch-size"),
           mg(derived(integer("global_batch_size", 1, limits::kMaxGlobalBatchSize,
                              "Sequences per step; give this or num_microbatches (a --set or "
                              "overrides: entry of either replaces the other)."),
                      "num_microbatches × micro_batch_size × data_parallel"),
              "--global-batch-size"),
           derived(integer("num_microbatches", 1, limits::kMaxMicrobatches,
                           "Micro-batches per pipeline per step; give this or "
                           "global_batch_size."),
                   "global_batch_size / (micro_batch_size × data_parallel)"),
           derived(choice("schedule", {"gpipe", "1f1b", "interleaved-1f1b"}, "Pipeline schedule."),
                   "interleaved-1f1b when virtual_stages > 1, else 1f1b"),
           mg(def(integer("virtual_stages", 1, limits::kMaxVirtualStages,
                          "Model chunks per GPU (interleaved-1f1b)."),
                  "1"),
              "--num-virtual-stages-per-pipeline-rank"),
           mg(integer("num_layers_per_virtual_pipeline_stage", 1, limits::kMaxLayers,
                      "Layers per model chunk: sets virtual_stages = num_layers / "
                      "(pipeline_parallel × this); give one of the two."),
              "--num-layers-per-virtual-pipeline-stage"),
           mg(def(boolean("sequence_parallel",
                          "Split layer norm and dropout over the TP group (reduce-scatter + "
                          "all-gather instead of all-reduce)."),
                  "false"),
              "--sequence-parallel"),
           mg(def(choice("recompute", {"none", "selective", "full"},
                         "Activation recomputation (Korthikanti et al. 2022)."),
                  "none"),
              "--recompute-granularity"),
           mg(def(row("recompute_modules", K::kList,
                      "With recompute selective: the modules whose saved activations are freed "
                      "and whose forward reruns in backward (Megatron-Core "
                      "TransformerConfig.recompute_modules): core_attn (the attention core), "
                      "moe_act (the experts' activation function; needs moe_grouped_gemm), "
                      "layernorm (the norms before attention and the MLP that are kernels of "
                      "their own), mla_up_proj (multi-latent attention's up-projections and "
                      "RoPE), mlp (dense MLPs), moe (the whole MoE MLP, dispatch and combine "
                      "included), shared_experts (not with moe_shared_expert_overlap)."),
                  "[core_attn]"),
              "--recompute-modules"),
           mg(derived(boolean("distributed_optimizer",
                              "ZeRO-1: optimizer state sharded over data parallelism "
                              "(reduce-scatter gradients, all-gather weights); the same as "
                              "data_parallel_sharding_strategy optim."),
                      "true unless data_parallel_sharding_strategy is no_shard"),
              "--use-distributed-optimizer"),
           mg(derived(choice("data_parallel_sharding_strategy",
                             {"no_shard", "optim", "optim_grads", "optim_grads_params"},
                             "What data parallelism shards over its ranks: nothing, the "
                             "optimizer state (ZeRO-1, the distributed optimizer), the "
                             "gradients too (ZeRO-2: reduce-scattered every micro-batch), or the "
                             "weights too (ZeRO-3 / FSDP: all-gathered per layer before forward "
                             "and backward)."),
                      "optim when distributed_optimizer is true, else no_shard"),
              "--data-parallel-sharding-strategy"),
           // Megatron-Core FSDP (megatron/core/distributed/fsdp/; arguments.py
           // --use-megatron-fsdp, formerly --use-custom-fsdp): what it shards is the strategy
           // above, optim_grads_params unless given.
           [] {
             Setting s = mg(derived(boolean("fsdp",
                                            "Megatron-Core FSDP: true sets "
                                            "data_parallel_sharding_strategy optim_grads_params "
                                            "unless the strategy is given; false refuses "
                                            "optim_grads_params (Megatron's DDP and distributed "
                                            "optimizer do not shard the weights)."),
                                    "true when data_parallel_sharding_strategy is "
                                    "optim_grads_params"),
                            "--use-megatron-fsdp");
             s.aliases.push_back("use_custom_fsdp");
             return s;
           }(),
           mg(def(boolean("overlap_grad_reduce",
                          "Reduce gradient buckets during the last micro-batch's backward."),
                  "false"),
              "--overlap-grad-reduce"),
           mg(def(boolean("overlap_param_gather",
                          "Distributed optimizer: all-gather the updated weights bucket by "
                          "bucket behind the next step's forward (each layer waits only for "
                          "its bucket)."),
                  "false"),
              "--overlap-param-gather"),
           mg(def(boolean("grad_reduce_in_bf16",
                          "Reduce gradients in bf16 (half the bytes of fp32; the gradient "
                          "buffer is bf16, the optimizer's main gradients stay fp32)."),
                  "false"),
              "--grad-reduce-in-bf16"),
           mg(def(boolean("use_precision_aware_optimizer",
                          "Transformer Engine's FusedAdam keeps the optimizer state in the dtypes "
                          "below (Megatron-Core's precision-aware optimizer)."),
                  "false"),
              "--use-precision-aware-optimizer"),
           def(boolean("store_param_remainders",
                       "Precision-aware optimizer with an fp32 master and bf16 parameters: keep "
                       "only the master's 16 low bits (2 B per parameter, not 4; Megatron-Core "
                       "OptimizerConfig.store_param_remainders)."),
               "true"),
           mg(def(choice("main_params_dtype", {"fp32", "fp16"},
                         "Dtype of the optimizer's master weights (not fp32: needs "
                         "use_precision_aware_optimizer)."),
                  "fp32"),
              "--main-params-dtype"),
           mg(def(choice("main_grads_dtype", {"fp32", "bf16"},
                         "Dtype of the gradients the optimizer steps on; bf16 with "
                         "grad_reduce_in_bf16 keeps no fp32 copy (needs "
                         "use_precision_aware_optimizer)."),
                  "fp32"),
              "--main-grads-dtype"),
           mg(def(choice("exp_avg_dtype", {"fp32", "fp16", "bf16", "fp8"},
                         "Dtype of Adam's first moment (not fp32: needs "
                         "use_precision_aware_optimizer)."),
                  "fp32"),
              "--exp-avg-dtype"),
           mg(def(choice("exp_avg_sq_dtype", {"fp32", "fp16", "bf16", "fp8"},
                         "Dtype of Adam's second moment (not fp32: needs "
                         "use_precision_aware_optimizer)."),
                  "fp32"),
              "--exp-avg-sq-dtype"),
           // optimizer_offload: the name some recipes' tables give it.
           alias(
               mg(def(boolean(
                          "optimizer_cpu_offload",
                          "Megatron-Core's hybrid device optimizer: optimizer_offload_fraction of "
                          "the optimizer step (fp32 master weights, Adam moments, gradients) on "
                          "the host CPU (needs use_precision_aware_optimizer, the distributed "
                          "optimizer and cluster.host)."),
                      "false"),
                  "--optimizer-cpu-offload"),
               "optimizer_offload"),
           mg(def(number("optimizer_offload_fraction", 0, 1,
                         "Fraction of each GPU's optimizer shard stepped on the host."),
                  "1"),
              "--optimizer-offload-fraction"),
           mg(def(boolean("overlap_cpu_optimizer_d2h_h2d",
                          "Offload: one CPU optimizer per parameter, its gradient copy (D2H), "
                          "CPU step and weight copy (H2D) pipelined on their own streams; "
                          "otherwise all gradients, then one CPU step, then all weights."),
                  "false"),
              "--overlap-cpu-optimizer-d2h-h2d"),
           mg(def(boolean("tp_comm_overlap",
                          "Sequence parallelism: split each TP all-gather and reduce-scatter "
                          "into chunks overlapped with its GEMM (Transformer Engine "
                          "userbuffers); needs sequence_parallel and tensor_parallel > 1."),
                  "false"),
              "--tp-comm-overlap"),
           def(integer("gpus_per_island", 0, limits::kMaxIslandSize,
                       "GPUs the plan uses in each NVLink island, the first ones (e.g. 64 of an "
                       "NVL72 rack's 72, as block-topology schedulers hand them out); ranks skip "
                       "the others. 0: every GPU."),
               "0"),
           def(row("placement", K::kList,
                   "Rank order, fastest-varying first: a list of tensor, context, data and "
                   "pipeline, each once (Megatron-Core's order tp-cp-dp-pp). Tensor first "
                   "keeps TP groups inside an NVLink island; a list without context puts it "
                   "right after tensor."),
               "[tensor, context, data, pipeline]"),
           mg(def(choice("precision", {"bf16", "fp16", "fp8", "tf32", "fp32", "fp4"},
                         "Datatype of the GEMMs (and the peak they run at); fp4 runs the linear "
                         "layers in NVFP4 (fp4_recipe), needs Blackwell."),
                  "bf16"),
              "--bf16 / --fp16 / --fp4-format"),
           row("pipeline_layers", K::kList,
               "Layers per virtual stage in model order, one entry for each of "
               "pipeline_parallel × virtual_stages; absent: an even split."),
           mg(integer("decoder_first_pipeline_num_layers", 1, limits::kMaxLayers,
                      "Layers of the first pipeline stage (the rest split evenly)."),
              "--decoder-first-pipeline-num-layers"),
           mg(integer("decoder_last_pipeline_num_layers", 1, limits::kMaxLayers,
                      "Layers of the last pipeline stage (the rest split evenly)."),
              "--decoder-last-pipeline-num-layers"),
           mg(row("pipeline_model_parallel_layout", K::kString,
                  "Megatron-Core's flexible layout: virtual stages separated by |, each a string "
                  "of E (embedding, first), t (one decoder layer) and L (loss, last), with "
                  "(...)*N and t*N repeats, e.g. Et|(tt|)*30L; virtual_stages follows "
                  "(stages / pipeline_parallel) and stages may be empty."),
              "--pipeline-model-parallel-layout"),
           mg(def(boolean("account_for_embedding_in_pipeline_split",
                          "The embedding takes one layer's slot in the even split: the first "
                          "virtual stage gets one decoder layer fewer."),
                  "false"),
              "--account-for-embedding-in-pipeline-split"),
           mg(def(boolean("account_for_loss_in_pipeline_split",
                          "The loss (output layer) takes one layer's slot in the even split: the "
                          "last virtual stage gets one decoder layer fewer."),
                  "false"),
              "--account-for-loss-in-pipeline-split"),
           mg(derived(integer("grad_bucket_size", 1, limits::kMaxGradBucketSize,
                              "Parameters per gradient bucket (overlap_grad_reduce)."),
                      "max(40M, 1M × data_parallel)"),
              "--ddp-bucket-size"),
           mg(def(choice("attention_backend", {"auto", "flash", "fused", "unfused", "flash2"},
                         "Attention kernels: flash (FlashAttention) and fused (cuDNN) are one "
                         "kernel per pass with no s×s tensor; unfused is 2020-22 Megatron "
                         "(QKᵀ, softmax, dropout through HBM); flash2 is FlashAttention-2 as "
                         "PyTorch SDPA runs it; auto: the stack's pick (Megatron-Core: fused on "
                         "Hopper and Blackwell, flash on Ampere, unfused when the GPU's "
                         "architecture is unspecified; stack attention sdpa: flash2)."),
                  "auto"),
              "--attention-backend"),
           derived(row("stack", K::kMap,
                       "The software stack that runs the plan: a profile in the library's "
                       "stacks/ folder (megatron-core, torchtitan, torchtitan-compile), a path, "
                       "or an inline map (section `plan.stack`, docs/stacks.md)."),
                   "megatron-core (Megatron-Core with Transformer Engine)"),
           mg(def(choice("fp8_recipe", {"delayed", "tensorwise", "blockwise", "mxfp8"},
                         "FP8 scaling recipe with precision fp8 (Transformer Engine); mxfp8 "
                         "needs Blackwell."),
                  "delayed"),
              "--fp8-recipe"),
           mg(def(boolean("fp8_attention",
                          "Attention in FP8 too (precision fp8); otherwise it runs in BF16."),
                  "false"),
              "--fp8-dot-product-attention"),
           mg(def(choice("fp4_recipe", {"nvfp4"},
                         "FP4 recipe with precision fp4: Transformer Engine's NVFP4BlockScaling "
                         "(E2M1 in 16-element blocks with E4M3 scales and an FP32 tensor scale; "
                         "16x16 weight blocks, random Hadamard transforms on the weight-gradient "
                         "inputs, stochastic rounding of gradients); attention stays BF16."),
                  "nvfp4"),
              "--fp4-recipe"),
           mg(def(boolean("first_last_layers_bf16",
                          "Precision fp8 or fp4: the first num_layers_at_start_in_bf16 and last "
                          "num_layers_at_end_in_bf16 transformer layers run in BF16."),
                  "false"),
              "--first-last-layers-bf16"),
           mg(def(integer("num_layers_at_start_in_bf16", 0, limits::kMaxLayers,
                          "Layers kept in BF16 at the start (first_last_layers_bf16)."),
                  "1"),
              "--num-layers-at-start-in-bf16"),
           mg(def(integer("num_layers_at_end_in_bf16", 0, limits::kMaxLayers,
                          "Layers kept in BF16 at the end (first_last_layers_bf16)."),
                  "1"),
              "--num-layers-at-end-in-bf16"),
           mg(def(boolean("fp8_param_gather",
                          "Precision fp8: the weights live only in FP8 (no 16-bit copy) and the "
                          "distributed optimizer all-gathers them in FP8."),
                  "false"),
              "--fp8-param-gather"),
           // Mixture of experts (Megatron-Core megatron/core/parallel_state.py and
           // megatron/core/transformer/moe/); used only when the model has experts.
           mg(def(integer("expert_model_parallel_size", 1, limits::kMaxGpus,
                          "Expert-parallel size EP: each MoE layer's experts split over EP GPUs "
                          "of a pipeline stage, folded over its tensor, context and data ranks "
                          "(expert-data-parallel = t cp d / (EP ETP))."),
                  "1"),
              "--expert-model-parallel-size"),
           mg(derived(integer("expert_tensor_parallel_size", 1, limits::kMaxGpus,
                              "Tensor-parallel size of the experts (ETP): t (split like the "
                              "dense layers) or 1 (whole experts; alltoall dispatcher)."),
                      "tensor_parallel"),
              "--expert-tensor-parallel-size"),
           mg(def(choice("moe_token_dispatcher_type", {"allgather", "alltoall", "flex"},
                         "How routed tokens reach their experts: all-to-all over the EP group "
                         "(dispatch and combine), all-gather of every token and a "
                         "reduce-scatter of the outputs, or flex (DeepEP: each token once per "
                         "destination GPU, once per node over RDMA; docs/moe.md)."),
                  "allgather"),
              "--moe-token-dispatcher-type"),
           mg(number("moe_expert_capacity_factor", 0.01, 1000,
                     "Tokens an expert takes, as a multiple of the balanced share; beyond, "
                     "tokens are dropped. Absent: dropless."),
              "--moe-expert-capacity-factor"),
           mg(def(boolean("moe_pad_expert_input_to_capacity",
                          "With a capacity factor, every expert runs its full capacity (padded)."),
                  "false"),
              "--moe-pad-expert-input-to-capacity"),
           def(number("moe_expert_load_imbalance", 1, 1000,
                      "Routing imbalance: the busiest expert's tokens / the mean (1: balanced). "
                      "The busiest rank sets the pace of each MoE layer (capped by the "
                      "capacity factor)."),
               "1"),
           mg(def(boolean("moe_shared_expert_overlap",
                          "Run the shared expert during the dispatch and combine all-to-alls."),
                  "false"),
              "--moe-shared-expert-overlap"),
           mg(def(choice("moe_flex_dispatcher_backend", {"deepep", "hybridep"},
                         "The flex dispatcher's kernels: DeepEP's normal kernels or HybridEP "
                         "(NVLink-domain-wide dispatch on NVL72). trident lowers both the same "
                         "way, with the NVLink island as the domain inside which a token is "
                         "sent to each destination GPU (docs/moe.md, \"The flex dispatcher\")."),
                  "deepep"),
              "--moe-flex-dispatcher-backend"),
           mg(def(boolean("moe_grouped_gemm",
                          "The local experts' GEMMs as one grouped GEMM (Transformer Engine "
                          "GroupedLinear); false: one GEMM per local expert, one after the "
                          "other (Megatron-Core SequentialMLP). Megatron's default is false; "
                          "trident's true, as every MoE recipe sets it."),
                  "true"),
              "--moe-grouped-gemm"),
           mg(def(boolean("moe_router_force_load_balancing",
                          "Benchmark routing from random logits (Megatron-Core, experimental): "
                          "balanced, the same as moe_expert_load_imbalance 1, which it requires."),
                  "false"),
              "--moe-router-force-load-balancing"),
           derived(integer("expert_data_parallel", 1, limits::kMaxGpus,
                           "The expert-data-parallel size as a recipe states it; checked, not "
                           "set: it must equal tensor × context × data / (expert_model_parallel "
                           "× expert_tensor_parallel)."),
                   "t × cp × d / (EP × ETP)"),
           derived(integer("gradient_accumulation", 1, limits::kMaxMicrobatches,
                           "Gradient-accumulation steps as a recipe states them; checked, not "
                           "set: it must equal num_microbatches."),
                   "num_microbatches"),
           mg(def(boolean("overlap_p2p_comm",
                          "Interleaved 1F1B: pipeline sends and receives run beside the next "
                          "chunk's compute (Megatron's default; trident's pipeline sends never "
                          "hold the sender). false with virtual_stages > 1 is refused (not "
                          "modelled); Megatron forces false without interleaving, which trident "
                          "accepts."),
                  "true"),
              "--no-overlap-p2p-communication (negated)"),
           mg(def(boolean("overlap_moe_expert_parallel_comm",
                          "Megatron-Core's 1F1B all-to-all overlap: one micro-batch's dispatch "
                          "and combine beside another's compute. Not simulated yet: true is "
                          "refused; false (Megatron's default) is what trident runs."),
                  "false"),
              "--overlap-moe-expert-parallel-comm"),
           mg(number("moe_expert_rank_capacity_factor", 1, 1000,
                     "HybridEP's static receive budget per EP rank, as a multiple of the "
                     "balanced share (flex dispatcher, hybridep backend): the dispatch sizes "
                     "its output without asking the host, so the forward has no host-device "
                     "sync (docs/host-launch.md). Absent: none."),
              "--moe-expert-rank-capacity-factor"),
           mg(def(boolean("moe_paged_stash",
                          "Stash MoE activations in fixed-size pages (Megatron-Core paged "
                          "stash; needs hybridep and moe_expert_rank_capacity_factor). trident "
                          "already keeps the routed tokens' activations at their real count, so "
                          "it changes no memory figure; it makes the step sync-free."),
                  "false"),
              "--moe-paged-stash"),
           mg(def(choice("cuda_graph_impl", {"none", "local", "transformer_engine"},
                         "Who captures CUDA graphs (Megatron-Core --cuda-graph-impl): kernels "
                         "inside a graph are replayed without the host launching each one "
                         "(plan.stack.host_time_per_kernel; docs/host-launch.md)."),
                  "none"),
              "--cuda-graph-impl"),
           mg(def(row("cuda_graph_scope", K::kList,
                      "With cuda_graph_impl: the parts of each layer captured, forward and "
                      "backward (Megatron-Core --cuda-graph-scope): attn (norm, attention, "
                      "residual), mlp (a dense MLP), moe (a MoE MLP; needs "
                      "moe_pad_expert_input_to_capacity), moe_router (pre-MLP norm, router), "
                      "moe_preprocess (the permutation metadata; needs moe_router), "
                      "full_iteration (the whole step; with MoE a sync-free dispatch). Empty: "
                      "every part the layer has (attn and mlp, or attn, moe_router and "
                      "moe_preprocess)."),
                  "[]"),
              "--cuda-graph-scope"),
           def(row("activation_offload", K::kList,
                   "Megatron-Core fine-grained activation offloading (offload_modules): the "
                   "saved inputs of these modules go to host memory after their forward and "
                   "come back for their backward, over cluster.host's links beside the "
                   "compute (needs them). Modelled: expert_fc1, moe_act (MoE layers); "
                   "Megatron's other modules are refused by name."),
               "[]"),
           number("train_tokens", 1, 1e18,
                  "Tokens of the whole training run: the report adds days of training and "
                  "GPU-hours (a plain number, 15e12; trident's --train-tokens takes 15T)."),
           number("gpu_hour_price", 0, 1e9,
                  "Price of one GPU-hour, any currency: with train_tokens the report adds "
                  "the cost (trident's --gpu-hour-price)."),
       }});
  // A software stack's profile (config/stack.h, docs/stacks.md; configs/stacks/ sources each
  // value). The defaults are Megatron-Core with Transformer Engine.
  out.push_back(
      {"plan.stack",
       "How a software stack turns the model and plan into kernels and collectives "
       "(docs/stacks.md).",
       {
           req(row("name", K::kString, "Stack name, shown in reports.")),
           row("description", K::kString, "Free text for people: versions, sources."),
           def(choice("elementwise", {"fused", "eager"},
                      "Norms, rotary embeddings, the SwiGLU gate and residual adds: one fused "
                      "kernel each (Transformer Engine, torch.compile), or every PyTorch op its "
                      "own kernel and HBM pass (eager)."),
               "fused"),
           def(choice("attention", {"te", "sdpa"},
                      "The kernel attention_backend auto picks: te (cuDNN fused attention on "
                      "Hopper and Blackwell, FlashAttention-2 on Ampere) or sdpa (PyTorch "
                      "scaled_dot_product_attention: FlashAttention-2, `flash2`)."),
               "te"),
           def(quantity("host_time_per_kernel", D::kTime, 0, limits::kMaxLatency,
                        "CPU time to launch one kernel (eager PyTorch dispatch); the GPU waits "
                        "when the host falls behind its queue (docs/host-launch.md). 0: never "
                        "host-bound. The default is Megatron-Core's, fitted "
                        "(docs/calibration.md)."),
               microseconds_text(kMegatronCoreHostTimePerKernel)),
           def(boolean("tp_grad_overlap",
                       "The input-gradient TP collective runs beside the weight-gradient GEMM "
                       "(Megatron's backward); false: it is exposed."),
               "true"),
           def(choice("selective_recompute", {"attention_core", "alternate_matmuls"},
                      "What recompute selective recomputes: the attention core (Megatron) or "
                      "every other matmul and all element-wise ops (torchtitan's op policy)."),
               "attention_core"),
           def(choice("context_parallel", {"transformer_engine", "torch"},
                      "Whose context-parallel attention the stack calls: Transformer Engine's "
                      "(Megatron-Core) or PyTorch's context_parallel (torchtitan); the default "
                      "of plan.cp_implementation."),
               "transformer_engine"),
       }});
  return out;
}

std::string short_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

}  // namespace

const char* setting_kind_name(SettingKind kind) {
  switch (kind) {
    case SettingKind::kString:
      return "string";
    case SettingKind::kInteger:
      return "integer";
    case SettingKind::kNumber:
      return "number";
    case SettingKind::kQuantity:
      return "quantity";
    case SettingKind::kBool:
      return "bool";
    case SettingKind::kChoice:
      return "choice";
    case SettingKind::kList:
      return "list";
    case SettingKind::kMap:
      return "map";
  }
  return "?";
}

std::string Setting::range_text() const {
  const std::string lo = min_open ? "(" : "[";
  switch (kind) {
    case SettingKind::kInteger:
      return "[" + short_number(min) + ", " + short_number(max) + "]";
    case SettingKind::kNumber:
      return (zero_allowed ? "0 or " : "") + lo + short_number(min) + ", " + short_number(max) +
             "]";
    case SettingKind::kQuantity:
      return lo + format_quantity(min, dimension) + ", " + format_quantity(max, dimension) + "]";
    case SettingKind::kChoice: {
      std::string out;
      for (const std::string& c : choices) out += (out.empty() ? "" : " | ") + c;
      return out;
    }
    case SettingKind::kBool:
      return "true | false";
    case SettingKind::kString:
    case SettingKind::kList:
    case SettingKind::kMap:
      break;
  }
  return "";
}

std::string Setting::default_text() const {
  if (!default_value.empty()) return default_value;
  if (required) return "required";
  if (!derived.empty()) return "= " + derived;
  return "none";
}

const std::vector<SettingSection>& settings_sections() {
  static const std::vector<SettingSection> kSections = build_sections();
  return kSections;
}

const SettingSection* find_section(const std::string& path) {
  for (const SettingSection& s : settings_sections()) {
    if (s.path == path) return &s;
  }
  return nullptr;
}

const Setting* find_setting(const std::string& path, const std::string& key) {
  const SettingSection* section = find_section(path);
  if (section == nullptr) return nullptr;
  for (const Setting& s : section->settings) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

const Setting& setting(const std::string& path, const std::string& key) {
  const Setting* s = find_setting(path, key);
  if (s == nullptr) throw std::logic_error("undeclared setting " + path + "." + key);
  return *s;
}

const std::vector<std::string>* section_names(const std::string& path) {
  static const std::map<std::string, std::vector<std::string>> kNames = [] {
    std::map<std::string, std::vector<std::string>> names;
    for (const SettingSection& s : settings_sections()) {
      std::vector<std::string>& list = names[s.path];
      for (const Setting& row : s.settings) {
        list.push_back(row.key);
        list.insert(list.end(), row.aliases.begin(), row.aliases.end());
      }
    }
    return names;
  }();
  auto it = kNames.find(path);
  return it == kNames.end() ? nullptr : &it->second;
}

std::string canonical_key(const std::string& path, const std::string& name) {
  const SettingSection* section = find_section(path);
  if (section == nullptr) return "";
  for (const Setting& row : section->settings) {
    if (row.key == name) return row.key;
    for (const std::string& a : row.aliases) {
      if (a == name) return row.key;
    }
  }
  return "";
}

std::string canonical_key_path(const std::string& path) {
  std::string out, prefix;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? dot : dot - start);
    const std::string key = canonical_key(prefix, part);
    const std::string name = key.empty() ? part : key;
    out += (start == 0 ? "" : ".") + name;
    prefix = prefix.empty() ? name : prefix + "." + name;
    if (dot == std::string::npos) return out;
    start = dot + 1;
  }
}

const std::vector<std::string>* section_keys(const std::string& path) {
  static const std::map<std::string, std::vector<std::string>> kKeys = [] {
    std::map<std::string, std::vector<std::string>> keys;
    for (const SettingSection& s : settings_sections()) {
      std::vector<std::string>& list = keys[s.path];
      for (const Setting& row : s.settings) list.push_back(row.key);
    }
    return keys;
  }();
  auto it = kKeys.find(path);
  return it == kKeys.end() ? nullptr : &it->second;
}

}  // namespace trident
