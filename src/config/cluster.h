// Typed, validated description of a GPU cluster (DESIGN.md "Cluster"). SI units throughout.
#ifndef TRIDENT_CONFIG_CLUSTER_H_
#define TRIDENT_CONFIG_CLUSTER_H_

#include <map>
#include <string>

namespace trident {

enum class Precision { kBf16, kFp16, kFp8, kTf32, kFp32 };

// Returns "bf16", "fp16", ...; parse_precision returns false for unknown names.
const char* precision_name(Precision p);
bool parse_precision(const std::string& name, Precision* out);
// Bytes per element of a 16/8/32-bit datatype used for activations and gradients.
double precision_bytes(Precision p);

// Compute model parameters of a GPU (see workload/compute_model.h for how they are used).
// Fitted once per GPU type on measured data; never per scenario.
struct ComputeEfficiency {
  double gemm = 0.75;            // fraction of peak that large GEMMs reach
  double gemm_half_flops = 2e9;  // GEMM size (FLOP) at which efficiency is half of `gemm`
  double memory = 0.8;           // fraction of HBM bandwidth memory-bound kernels reach
  double kernel_overhead_s = 0;  // fixed cost per kernel (launch, tail)
  // Streaming multiprocessors: a GEMM runs in waves of 128 x 128 output tiles, one tile per
  // SM, and a last, partly filled wave wastes the idle SMs. 0: no wave quantization.
  int sm_count = 0;
};

struct GpuSpec {
  std::string name;
  std::map<Precision, double> peak_flops;  // FLOP/s, dense
  double memory_bytes = 0;
  double memory_bandwidth = 0;  // bytes/s
  ComputeEfficiency efficiency;
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

enum class Topology { kSingleSwitch, kFatTree };
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
};

struct ClusterSpec {
  std::string name;
  GpuSpec gpu;
  int nodes = 0;
  int gpus_per_node = 0;
  NvlinkSpec nvlink;
  NetworkSpec network;

  int total_gpus() const { return nodes * gpus_per_node; }
  // Returns the peak FLOP/s for `p`; requires gpu.peak_flops to hold it (validated at load).
  double peak(Precision p) const { return gpu.peak_flops.at(p); }
};

}  // namespace trident

#endif  // TRIDENT_CONFIG_CLUSTER_H_
