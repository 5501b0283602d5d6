#include "workload/host_launch.h"

#include <algorithm>

namespace trident {

HostLaunch host_launch(const PlanSpec& plan) {
  HostLaunch h;
  h.per_kernel_s = plan.stack.host_time_per_kernel_s;
  h.graphed = plan.cuda_graph_modules();
  return h;
}

std::vector<double> host_bound_times(const std::vector<Op>& ops, const std::vector<double>& gpu_s,
                                     const HostLaunch& host) {
  std::vector<double> out = gpu_s;
  if (!host.active()) return out;
  double issued = 0, done = 0;  // when the host issued the last kernel; when the GPU ran it
  unsigned graph = 0;  // the captured part the previous kernel was replayed from (0: eager)
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.host_sync) issued = std::max(issued, done);
    const OpKind kind = op.kind;
    if (kind != OpKind::kGemm && kind != OpKind::kMemory && kind != OpKind::kAttention) continue;
    if (gpu_s[i] <= 0) continue;
    const bool graphed = op.graph_module != 0 && (host.graphed & op.graph_module) != 0;
    if (!graphed) {
      issued += host.per_kernel_s * op.launches;
    } else if (graph != op.graph_module) {
      issued += host.per_kernel_s;  // cudaGraphLaunch of the captured part
    }
    graph = graphed ? op.graph_module : 0;
    const double wait = std::max(0.0, issued - done);
    out[i] = gpu_s[i] + wait;
    done += out[i];
  }
  return out;
}

}  // namespace trident
