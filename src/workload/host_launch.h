// The host's side of a step: every kernel is launched by the CPU, and the GPU waits when the
// host falls behind. A launch queue per op list (one layer's forward or backward, the
// embedding, the loss): the host and the GPU start a list together; the host needs
// plan.stack.host_time_per_kernel for each kernel it launches and keeps launching while the
// GPU works, so long kernels let it run ahead and short ones expose it. Three things of
// Megatron-Core change what the host launches (docs/host-launch.md):
// - CUDA graphs (plan.cuda_graph_impl, cuda_graph_scope): the kernels of a captured part of
//   a layer are replayed by one graph launch; full_iteration captures the whole step, so the
//   host never holds the GPU back;
// - host-device syncs (PlanSpec::moe_dispatch_syncs): a MoE layer's forward waits for the GPU
//   to finish the router before its dispatch, so the queue is empty after it;
// - grouped expert GEMMs: one launch per local expert (Op::launches).
#ifndef TRIDENT_WORKLOAD_HOST_LAUNCH_H_
#define TRIDENT_WORKLOAD_HOST_LAUNCH_H_

#include <vector>

#include "config/plan.h"
#include "workload/layer_ops.h"

namespace trident {

// What the host launches under a plan: its per-kernel time and the captured parts.
struct HostLaunch {
  double per_kernel_s = 0;  // plan.stack.host_time_per_kernel
  unsigned graphed = 0;     // CudaGraphModule bits replayed from graphs
  // Whether the host ever holds the GPU back (per_kernel_s > 0 and not full_iteration).
  bool active() const { return per_kernel_s > 0 && (graphed & kGraphFullIteration) == 0; }
};

// Returns the host launch model of `plan`: its stack's per-kernel time and the CudaGraphModule
// bits its graphs capture (PlanSpec::cuda_graph_modules).
HostLaunch host_launch(const PlanSpec& plan);

// Returns the kernel times of `ops` (`gpu_s[i]` the GPU time of ops[i]) under `host`: kernel k
// starts when the host has issued it and the GPU has finished kernel k-1. An eager op costs the
// host Op::launches launches; a captured one nothing but the first of a run of captured ops (its
// graph's launch); before an op with Op::host_sync the host waits for the GPU. Ops that launch
// no kernel (collectives, transfers) keep their time. Each returned time is the GPU time plus
// the wait before it. Requires gpu_s.size() == ops.size().
std::vector<double> host_bound_times(const std::vector<Op>& ops, const std::vector<double>& gpu_s,
                                     const HostLaunch& host);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_HOST_LAUNCH_H_
