// Optimizer CPU offload as Megatron-Core runs it (--optimizer-cpu-offload; megatron/core/
// optimizer/cpu_offloading/hybrid_optimizer.py, HybridDeviceOptimizer, inside the distributed
// optimizer): the first optimizer_offload_fraction of each GPU's optimizer shard is stepped on
// the host by torch.optim.AdamW(fused=True) (megatron/core/optimizer/__init__.py), the rest on
// the GPU by Transformer Engine's FusedAdam. Per step:
//   D2H  the fp32 main gradients of the offloaded parameters into pinned host buffers (4 B each)
//   CPU  fused AdamW over fp32 master weights, gradients and both moments: reads 16 B and
//        writes 12 B per parameter, at the host DRAM bandwidth the node's GPUs share
//   H2D  the updated fp32 master weights back (4 B each; non_blocking copies convert on the
//        GPU, PyTorch aten/src/ATen/native/cuda/Copy.cu), into the model's weights
// The host keeps 16 B per offloaded parameter (fp32 master, exp_avg, exp_avg_sq, pinned
// gradient) and the GPU drops their optimizer state.
//
// Without overlap_cpu_optimizer_d2h_h2d every copy runs on the compute stream: the gradients go
// down, then the GPU's share steps while one CPU optimizer steps all offloaded parameters, then
// the weights go up. With it, one CPU optimizer per parameter (build_cpu_optimizer_list): the
// copies run on their own streams, so parameter i's gradients go down while the GPU steps, the
// CPU steps parameter i once they arrived, and its weights go up once the GPU's step is done
// (the H2D stream waits on the compute stream). Pure; no SimGrid.
#ifndef TRIDENT_WORKLOAD_OPTIMIZER_OFFLOAD_H_
#define TRIDENT_WORKLOAD_OPTIMIZER_OFFLOAD_H_

#include "config/cluster.h"
#include "config/plan.h"

namespace trident {

// Bytes per offloaded parameter: copied each way, moved by the CPU step, held on the host.
constexpr double kOffloadCopyBytesPerParam = 4;
constexpr double kCpuAdamBytesPerParam = 16 + 12;
constexpr double kOffloadHostBytesPerParam = 16;

// One GPU's offloaded optimizer work (all zero when plan.optimizer_cpu_offload is off).
struct OptimizerOffload {
  bool active = false;
  bool overlap = false;  // plan.overlap_cpu_optimizer_d2h_h2d
  double params = 0;     // parameters stepped on the host
  double d2h_bytes = 0, h2d_bytes = 0;
  double d2h_s = 0, cpu_s = 0, h2d_s = 0;  // the whole share, each alone
  double host_bytes = 0;                   // host memory it holds
  int pieces = 1;                          // parameters pipelined under overlap
};

// Returns the offload of a GPU whose optimizer shard holds `shard_params` parameters in about
// `tensors` parameter tensors, under plan and cluster (cluster.host; the node's gpus_per_node
// share its DRAM bandwidth). Requires a validated scenario.
OptimizerOffload optimizer_offload(const PlanSpec& plan, const ClusterSpec& cluster,
                                   double shard_params, double tensors);

// When each part of the optimizer step ends, in seconds from its start, for a GPU step of
// `gpu_s` (its share of Adam and the weights' casts): the GPU's step runs in [gpu_start,
// gpu_end] and the step ends at `end`, once the last weights are back.
struct OffloadTimes {
  double gpu_start = 0, gpu_end = 0;
  double d2h_end = 0, cpu_end = 0, end = 0;
};
OffloadTimes offload_times(const OptimizerOffload& offload, double gpu_s);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_OPTIMIZER_OFFLOAD_H_
