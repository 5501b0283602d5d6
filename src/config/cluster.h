// Typed, validated description of a GPU cluster (docs/schema.md, `cluster`). SI units throughout.
#ifndef TRIDENT_CONFIG_CLUSTER_H_
#define TRIDENT_CONFIG_CLUSTER_H_

#include <map>
#include <string>
#include <vector>

namespace trident {

// kFp4 (NVFP4 / MXFP4 block-scaled, Blackwell) is a GEMM precision of the compute model
// (`trident kernel --precision fp4`) and, as a plan precision, NVFP4 training of the linear
// layers (plan.fp4_recipe).
enum class Precision { kBf16, kFp16, kFp8, kTf32, kFp32, kFp4 };

// Returns "bf16", "fp16", ...; parse_precision returns false for unknown names.
const char* precision_name(Precision p);
bool parse_precision(const std::string& name, Precision* out);
// Bytes per element of a 16/8/32-bit datatype used for activations and gradients.
double precision_bytes(Precision p);

// GPU generation: decides what `plan.attention_backend: auto` picks and which FP8 recipes run.
enum class GpuArchitecture { kUnspecified, kAmpere, kHopper, kBlackwell };
const char* architecture_name(GpuArchitecture a);

// Throughput model of one fused-attention kernel (FlashAttention / cuDNN: one kernel per pass,
// no s x s tensor in HBM). A pass of F FLOPs (those that run: causal skips the masked half)
// at sequence s and head dim d runs at
//   peak * eff * [d / (d + half_head_dim)] / [128 / (128 + half_head_dim)] * s / (s + half_seq)
//        * (causal ? s / (s + causal_seq) : 1) * waves
// with eff = forward or backward (backward: backward_half_seq), waves the fill of the SMs by
// b * heads * ceil(s / 128) query tiles. See workload/compute_model.h.
struct AttentionEfficiency {
  double forward = 0.5;   // fraction of peak at head dim 128, long sequences, no mask
  double backward = 0.4;  // the same for the backward kernel (counted as 2.5 x forward FLOPs)
  double half_seq = 256;  // forward: sequence length at which the ramp is at half
  double backward_half_seq = 512;
  double causal_seq = 256;  // causal mask: diagonal tiles cost s / (s + causal_seq)
  double half_head_dim = 64;
};

// Compute model parameters of one precision (GEMMs and fused attention at that precision).
struct PrecisionEfficiency {
  double gemm = 0.75;            // fraction of peak that large GEMMs reach
  double gemm_half_flops = 2e9;  // GEMM size (FLOP) at which efficiency is half of `gemm`
  AttentionEfficiency fused;     // cuDNN fused attention (Megatron-Core "fused")
  AttentionEfficiency flash;     // FlashAttention 2/3/4 (Megatron-Core "flash")
  // Tensor-core kernels at this precision inside a training step run at this fraction of the
  // isolated-kernel throughput above (ComputeEfficiency::in_training, per precision).
  double in_training = 1;
};

// Compute model parameters of a GPU (see workload/compute_model.h for how they are used).
// Fitted once per GPU type on measured data; never per scenario.
struct ComputeEfficiency {
  double gemm = 0.75;            // fraction of peak that large GEMMs reach (16-bit)
  double gemm_half_flops = 2e9;  // GEMM size (FLOP) at which efficiency is half of `gemm`
  AttentionEfficiency fused;     // 16-bit fused attention (cuDNN)
  AttentionEfficiency flash;     // 16-bit FlashAttention
  // Per-precision blocks (`efficiency.fp8`, `efficiency.fp4`): GEMM and attention parameters
  // at that precision; a precision without a block uses the 16-bit ones.
  std::map<Precision, PrecisionEfficiency> by_precision;
  // FlashAttention-2 at 16 bits, as PyTorch's scaled_dot_product_attention runs it (backend
  // flash2; stacks with attention sdpa). Unset: the `flash` parameters, which are FA2 on Ampere.
  bool has_flash2 = false;
  AttentionEfficiency flash2;
  double memory = 0.8;           // fraction of HBM bandwidth memory-bound kernels reach
  double kernel_overhead_s = 0;  // fixed cost per kernel (launch, tail)
  // Tensor-core kernels (GEMMs, fused attention) inside a training step run at this fraction of
  // the isolated-benchmark throughput the fractions above were fitted on (sustained clocks
  // under the power cap, HBM and L2 shared with communication kernels, launch gaps). 1 for a
  // GPU fitted on whole layers of a training step (the A100). Fitted per GPU and precision on
  // the published end-to-end runs by scripts/fit_end_to_end.py (docs/calibration.md); the
  // 16-bit value here, per-precision ones in by_precision.
  double in_training = 1;
  // Streaming multiprocessors: a GEMM runs in waves of 128 x 128 output tiles, one tile per
  // SM, and a last, partly filled wave wastes the idle SMs. 0: no wave quantization.
  int sm_count = 0;
};

// SM clocks of a GPU (gpu.clocks). Datasheet peaks are SMs x FLOP per clock x `quoted_hz`;
// dense tensor-core work at the board power limit settles at `sustained_hz`, so a kernel in a
// training step runs at sustained / quoted of its throughput at the quoted clock (a fat GEMM
// does ~0.9 of its FLOP per clock at either clock: stas00/ml-engineering, MAMF/MSMF table).
// 0: not given.
struct GpuClocks {
  double quoted_hz = 0;      // clock the datasheet peak_flops are quoted at
  double boost_hz = 0;       // maximum (boost) SM clock
  double sustained_hz = 0;   // SM clock under dense GEMM load at power_limit_w
  double power_limit_w = 0;  // board power limit
  // Returns sustained / quoted, 1 when either is not given.
  double sustained_ratio() const {
    return quoted_hz > 0 && sustained_hz > 0 ? sustained_hz / quoted_hz : 1.0;
  }
};

struct GpuSpec {
  std::string name;
  GpuArchitecture architecture = GpuArchitecture::kUnspecified;
  std::map<Precision, double> peak_flops;  // FLOP/s, dense
  double memory_bytes = 0;
  // HBM a training process cannot use for the model (gpu.memory_reserved), given by the user;
  // < 0: computed from the plan (workload/reserved_memory.h: CUDA context, NCCL buffers,
  // userbuffers, workspaces).
  double memory_reserved_bytes = -1;
  double memory_bandwidth = 0;  // bytes/s
  ComputeEfficiency efficiency;
  GpuClocks clocks;
};

// GPUs joined by NVSwitch: one full-duplex link per GPU to a non-blocking switch.
struct NvlinkSpec {
  int island_size = 0;               // GPUs per island; a multiple or divisor of gpus_per_node
  double bandwidth = 0;              // bytes/s per GPU per direction
  double latency = 0;                // s, GPU to GPU
  double protocol_efficiency = 1.0;  // achieved fraction of link bandwidth for bulk transfers
  // In-switch reduction (NVLink SHARP, NCCL's NVLS): when > 0, an all-reduce inside an island
  // sends each GPU's buffer to the switch once and receives the sum once, at this fraction of
  // the link bandwidth, instead of running a ring. 0: no in-switch reduction (A100).
  double in_switch_reduction_efficiency = 0;
};

enum class Topology { kSingleSwitch, kFatTree, kRailOptimized };
const char* topology_name(Topology t);

// Inter-island network. GPU i of a node uses NIC (i mod nics_per_node).
struct NetworkSpec {
  Topology topology = Topology::kFatTree;
  int nics_per_node = 1;
  double nic_bandwidth = 0;     // bytes/s per NIC per direction
  double latency = 0;           // s, GPU to GPU across the fabric
  double oversubscription = 1;  // fat tree: leaf downlink / uplink capacity ratio (>= 1)
  int nodes_per_leaf = 16;      // fat tree: nodes below one leaf switch group
  double protocol_efficiency = 1.0;
  // Rail-optimized fabric (docs/fabrics.md): NIC i of every node on rail i, a rail switch per
  // rail and group of nodes_per_leaf nodes, a spine above. pxn: a transfer to another rail
  // first crosses NVLink to the sender's node-mate on the receiver's rail (NCCL's PXN), else
  // it crosses the spine.
  bool pxn = true;
  // Independent switch planes each NIC's bandwidth is split over (1: one fabric). Flows are
  // spread evenly over the planes, so the planes are simulated as one aggregate fabric.
  int planes = 1;
  // Fat tree: switch tiers (2: leaf and spine; 3: leaf, spine and core). With 3, pods of
  // nodes_per_pod nodes (whole leaf groups) reach the core through uplinks of the pod's leaf
  // uplink capacity / pod_oversubscription.
  int tiers = 2;
  int nodes_per_pod = 0;
  double pod_oversubscription = 1;
};

// How collectives pick their algorithm (NCCL_ALGO): kAuto follows NCCL's cost model
// (docs/collectives.md); the others force one where it applies (else the ring).
enum class CollectiveAlgorithm { kAuto, kRing, kTree, kNvls, kNvlsTree };
// NCCL's protocols (NCCL_PROTO): low-latency flags, 128-byte lines, or plain chunks.
enum class CollectiveProtocol { kAuto, kLL, kLL128, kSimple };
// Returns "auto", "ring", "tree", "nvls", "nvls_tree"; "auto", "ll", "ll128", "simple".
const char* algorithm_name(CollectiveAlgorithm a);
const char* protocol_name(CollectiveProtocol p);

// Cost model of NCCL's collectives (cluster.nccl; NVIDIA/nccl src/graph/tuning.cc): per
// protocol a launch latency, a latency per hop added to the route's, and a bandwidth fraction.
struct NcclSpec {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kAuto;
  CollectiveProtocol protocol = CollectiveProtocol::kAuto;
  // Indexed by protocol (kLL, kLL128, kSimple; kAuto unused).
  double base_latency[4] = {0, 0, 0, 0};     // s per collective
  double step_latency[4] = {0, 0, 0, 0};     // s per ring step or tree level, beyond the route's
  double bandwidth[4] = {0, 0.25, 0.92, 1};  // fraction of the Simple protocol's bandwidth
  double tree_bandwidth = 0.9;  // tree and NVLS-tree: fraction of the ring's per-link bandwidth
  double nvls_latency = 0;      // s per NVLS or NVLS-tree collective (Simple only)
  double pipeline_chunk = 4.0 * (1 << 20);  // bytes per chunk of a hierarchical pipeline
};

// The host side of a node (cluster.host), for the optimizer's CPU offload. 0: not given.
struct HostSpec {
  double memory_bandwidth = 0;          // bytes/s of host DRAM per node, all sockets
  double host_to_device_bandwidth = 0;  // bytes/s per GPU, pinned copies
  double device_to_host_bandwidth = 0;  // bytes/s per GPU, pinned copies
};

// Job-interrupting failures and restart costs (cluster.reliability, docs/goodput.md): a mean
// time between failures per component (s), each component failing as a Poisson process.
struct ReliabilitySpec {
  double gpu_mtbf_s = 0;                    // per GPU
  double hbm_mtbf_s = 0;                    // per GPU
  double host_mtbf_s = 0;                   // per node
  double nic_mtbf_s = 0;                    // per NIC
  double switch_mtbf_s = 0;                 // per fabric switch
  double link_mtbf_s = 0;                   // per fabric cable
  double software_mtbf_s = 0;               // per GPU (rank)
  double unplanned_maintenance_mtbf_s = 0;  // per node
  double planned_maintenance_mtbf_s = 0;    // per node; no work lost
  double detection_s = 0;                   // failure -> job stopped
  double scheduling_s = 0;                  // job stopped -> nodes allocated again
  double process_start_s = 0;               // processes up, CUDA initialised
  double nccl_init_per_gpu_s = 0;           // communicator set-up, per GPU of the job
};

// Checkpoint storage (cluster.storage): bytes/s per node and for the whole file system.
struct StorageSpec {
  double write_bandwidth_per_node = 0;
  double read_bandwidth_per_node = 0;
  double write_bandwidth = 0;
  double read_bandwidth = 0;
};

// Stragglers (cluster.stragglers, docs/stragglers.md): GPUs and links slower than their peers.
// Ranks are GPU indices (node-major, as the platform numbers them): a plan's global ranks
// unless plan.gpus_per_island leaves GPUs out. All fields at their
// defaults (fractions 1, background 0): none, and every output as without the section.
struct StragglerSpec {
  // Slow GPUs (thermal or power throttling): `gpu_count` GPUs from global rank `gpu_rank`,
  // spread evenly over the plan's GPUs (slow_gpus), each running every kernel 1 / fraction as
  // long.
  double gpu_clock_fraction = 1;
  int gpu_rank = 0;
  int gpu_count = 1;
  // The NVLink (both directions) of GPU `nvlink_rank` at this fraction of its bandwidth.
  double nvlink_fraction = 1;
  int nvlink_rank = 0;
  // The NIC that GPU `nic_rank` uses (both directions) at this fraction of its bandwidth.
  double nic_fraction = 1;
  int nic_rank = 0;
  // Fraction of every inter-node fabric link's capacity (NICs, leaf uplinks) other jobs use.
  double background_traffic = 0;
};

// Datacenters joined by WAN links (cluster.sites, docs/fabrics.md): the nodes split into
// `count` sites of equal size, node n in site n / (nodes / count), each site a copy of the
// fabric of cluster.network; a transfer between sites leaves its site's fabric through the
// site's WAN uplink and enters the other's through its WAN downlink.
struct SiteSpec {
  int count = 1;             // 1: one site, no WAN
  double wan_bandwidth = 0;  // bytes/s per site per direction, all of its WAN links together
  double wan_latency = 0;    // s one way between two sites, beyond the fabric's latency
  // Returns the site of `node` in a cluster of `nodes` nodes.
  int site_of_node(int node, int nodes) const { return count > 1 ? node / (nodes / count) : 0; }
};

struct ClusterSpec {
  std::string name;
  GpuSpec gpu;
  int nodes = 0;
  int gpus_per_node = 0;
  NvlinkSpec nvlink;
  NetworkSpec network;
  NcclSpec nccl;
  HostSpec host;
  ReliabilitySpec reliability;
  StorageSpec storage;
  StragglerSpec stragglers;
  SiteSpec sites;

  int total_gpus() const { return nodes * gpus_per_node; }
  // Returns the site of GPU `gpu` (0 with one site).
  int site_of_gpu(int gpu) const { return sites.site_of_node(gpu / gpus_per_node, nodes); }
  // Returns the peak FLOP/s for `p`; requires gpu.peak_flops to hold it (validated at load).
  double peak(Precision p) const { return gpu.peak_flops.at(p); }
};

// Returns true when `cluster` has a slow GPU, a degraded link or background traffic.
bool has_stragglers(const ClusterSpec& cluster);
// Returns true when a link is degraded or shared (nvlink_fraction, nic_fraction < 1 or
// background_traffic > 0).
bool has_slow_links(const StragglerSpec& s);
// Returns `cluster` without stragglers (every StragglerSpec default): the same run, healthy.
ClusterSpec without_stragglers(const ClusterSpec& cluster);
// Returns the slow GPUs among GPUs [0, gpus) (those a plan spans), ascending: none when
// gpu_clock_fraction is 1, else gpu_count of them from GPU gpu_rank spaced gpus / gpu_count
// apart (wrapping), so several land in different nodes and replicas. Requires gpu_count <= gpus.
std::vector<int> slow_gpus(const StragglerSpec& s, int gpus);

}  // namespace trident

#endif  // TRIDENT_CONFIG_CLUSTER_H_
