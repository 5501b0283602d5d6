// The `cluster` sections of the settings table (config/settings_rows.h): the nodes, the host
// side, the GPU with its clocks, peaks and efficiency, and the fabrics (NVLink, the network,
// NCCL's cost model).
#include "config/limits.h"
#include "config/settings_rows.h"

namespace trident {

void append_cluster_sections(std::vector<SettingSection>* out) {
  using D = Dimension;
  using K = SettingKind;
  out->push_back(
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
           row("sites", K::kMap,
               "Datacenters joined by WAN links (section `cluster.sites`, docs/fabrics.md); "
               "absent: one site."),
       }});
  // Several datacenters (docs/fabrics.md, "Sites"): each a copy of cluster.network's fabric.
  out->push_back(
      {"cluster.sites",
       "The nodes split evenly into sites (node n in site n / (nodes / count)), each with the "
       "fabric of cluster.network, joined by WAN links.",
       {
           def(integer("count", 1, kMaxSites,
                       "Sites; nodes must divide evenly, and into whole leaf groups and pods."),
               "1"),
           in_bits(quantity("wan_bandwidth", D::kBandwidth, kMinLinkBandwidth,
                            limits::kMaxMemoryBandwidth,
                            "Per site, per direction: all of its WAN links together (e.g. 16 x "
                            "400 Gbps DCI links = `6.4 Tbps`); required with two or more "
                            "sites.")),
           def(quantity("wan_latency", D::kTime, 0, limits::kMaxLatency,
                        "One way between two sites, beyond the fabric's own latency (fiber: "
                        "about 5 us per km)."),
               "0 us"),
       }});
  // The host side of a node, for Megatron-Core's optimizer CPU offload (docs/memory.md,
  // "Optimizer CPU offload"): no defaults, so an offloaded plan names its machine's figures.
  out->push_back(
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
  out->push_back(
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
  out->push_back(
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
  out->push_back({"cluster.gpu.peak_flops",
                  "Dense peak FLOP rate per precision; a plan's `precision` needs its entry.",
                  std::move(peaks)});
  out->push_back(
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
    out->push_back(
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
      out->push_back(
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
  out->push_back(
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
  out->push_back(
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
  out->push_back(
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
                      "Fat tree and rail-optimized (each plane): leaf or rail switch downlink / "
                      "uplink capacity ratio (1: non-blocking)."),
               "1"),
           def(integer("nodes_per_leaf", 1, limits::kMaxNodes,
                       "Fat tree and rail-optimized (each plane): nodes below one leaf switch "
                       "group, or one rail switch."),
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
  out->push_back(
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
}

}  // namespace trident
