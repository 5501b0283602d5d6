#include "goodput/checkpoint.h"

#include <algorithm>
#include <cmath>

namespace trident {

const char* checkpoint_mode_name(CheckpointMode m) {
  return m == CheckpointMode::kSync ? "sync" : "async";
}

bool parse_checkpoint_mode(const std::string& name, CheckpointMode* out) {
  if (name == "sync")
    *out = CheckpointMode::kSync;
  else if (name == "async")
    *out = CheckpointMode::kAsync;
  else
    return false;
  return true;
}

CheckpointCost checkpoint_cost(const Scenario& scenario, const Workload& workload,
                               CheckpointMode mode) {
  const PlanSpec& plan = scenario.plan;
  const ClusterSpec& cluster = scenario.cluster;
  const double replicas = static_cast<double>(plan.data) * plan.context;
  const double gpus_per_stage = replicas * plan.tensor;
  CheckpointCost c;
  for (const StageWork& stage : workload.stages) {
    const StageMemory& m = stage.memory;
    const double optimizer = plan.distributed_optimizer ? m.optimizer : m.optimizer / replicas;
    const double bytes = m.weights / replicas + optimizer;
    c.bytes_per_gpu = std::max(c.bytes_per_gpu, bytes);
    c.bytes_total += bytes * gpus_per_stage;
  }
  const double gpus = gpus_per_stage * plan.pipeline;
  const double nodes = std::ceil(gpus / cluster.gpus_per_node);
  const double node_bytes = c.bytes_per_gpu * std::min<double>(cluster.gpus_per_node, gpus);
  const StorageSpec& s = cluster.storage;
  c.write_s = node_bytes / std::min(s.write_bandwidth_per_node, s.write_bandwidth / nodes);
  c.load_s = node_bytes / std::min(s.read_bandwidth_per_node, s.read_bandwidth / nodes);
  const double d2h = cluster.host.device_to_host_bandwidth;
  if (mode == CheckpointMode::kAsync && d2h > 0) {
    c.save_block_s = c.bytes_per_gpu / d2h;
    c.write_lag_s = c.write_s;
  } else {
    c.save_block_s = c.write_s;
    c.write_lag_s = 0;
  }
  const ReliabilitySpec& r = cluster.reliability;
  const double start = r.scheduling_s + r.process_start_s + r.nccl_init_per_gpu_s * gpus + c.load_s;
  c.restart_s = r.detection_s + start;
  c.planned_stop_s = c.write_s + start;
  return c;
}

}  // namespace trident
