#include "workload/optimizer_offload.h"

#include <algorithm>
#include <cmath>

namespace trident {

OptimizerOffload optimizer_offload(const PlanSpec& plan, const ClusterSpec& cluster,
                                   double shard_params, double tensors) {
  OptimizerOffload o;
  if (!plan.optimizer_cpu_offload) return o;
  o.active = true;
  o.overlap = plan.overlap_cpu_optimizer_d2h_h2d;
  o.params = shard_params * plan.optimizer_offload_fraction;
  o.d2h_bytes = o.params * kOffloadCopyBytesPerParam;
  o.h2d_bytes = o.params * kOffloadCopyBytesPerParam;
  o.d2h_s = o.d2h_bytes / cluster.host.device_to_host_bandwidth;
  o.h2d_s = o.h2d_bytes / cluster.host.host_to_device_bandwidth;
  // Every GPU of a node steps its optimizer at once; they share the node's DRAM.
  const double dram = cluster.host.memory_bandwidth / cluster.gpus_per_node;
  o.cpu_s = o.params * kCpuAdamBytesPerParam / dram;
  o.host_bytes = o.params * kOffloadHostBytesPerParam;
  o.pieces = std::max(1, static_cast<int>(std::ceil(tensors * plan.optimizer_offload_fraction)));
  return o;
}

OffloadTimes offload_times(const OptimizerOffload& o, double gpu_s) {
  OffloadTimes t;
  if (!o.active || o.params <= 0) {
    t.gpu_end = t.end = gpu_s;
    return t;
  }
  if (!o.overlap) {
    // One stream: gradients down, then the GPU's step while the CPU steps, then weights up.
    t.d2h_end = o.d2h_s;
    t.gpu_start = o.d2h_s;
    t.gpu_end = t.gpu_start + gpu_s;
    t.cpu_end = t.d2h_end + o.cpu_s;
    t.end = std::max(t.gpu_end, t.cpu_end) + o.h2d_s;
    return t;
  }
  // Pieces of equal size through three stages; the H2D stream also waits for the GPU's step.
  const int n = o.pieces;
  const double d = o.d2h_s / n, c = o.cpu_s / n, h = o.h2d_s / n;
  t.gpu_end = gpu_s;
  double cpu = 0, up = 0;
  for (int i = 0; i < n; ++i) {
    cpu = std::max(cpu, (i + 1) * d) + c;
    up = std::max({up, cpu, t.gpu_end}) + h;
  }
  t.d2h_end = o.d2h_s;
  t.cpu_end = cpu;
  t.end = up;
  return t;
}

}  // namespace trident
