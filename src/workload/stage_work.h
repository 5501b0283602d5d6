// The work of one pipeline stage, per tensor-parallel rank, reduced to what the engine runs:
// passes of segments (compute, then a tensor-parallel all-reduce), the optimizer step, the
// gradient bytes that data parallelism reduces, and memory.
#ifndef TRIDENT_WORKLOAD_STAGE_WORK_H_
#define TRIDENT_WORKLOAD_STAGE_WORK_H_

#include <vector>

#include "config/scenario.h"

namespace trident {

// Compute, then an all-reduce of `tp_bytes` over the TP group (none when 0 or t = 1), during
// which `overlap_s` more compute runs on the same GPU.
struct Segment {
  double compute_s = 0;
  double tp_bytes = 0;
  double overlap_s = 0;
};

// One forward or backward pass of one micro-batch through a stage, on one TP rank.
struct Pass {
  std::vector<Segment> segments;
  double compute_s = 0;    // sum of compute_s + overlap_s
  double flops = 0;        // FLOPs executed (hardware FLOPs)
  double model_flops = 0;  // FLOPs of the model itself (no recomputation)
  int collectives = 0;     // TP all-reduces in the pass
  double tp_bytes = 0;     // their summed payload
};

struct StageMemory {
  double weights = 0, gradients = 0, optimizer = 0;  // bytes per GPU
  double activations_per_microbatch = 0;             // bytes kept for backward
  int microbatches_in_flight = 0;                    // at the schedule's peak
  double activations() const { return activations_per_microbatch * microbatches_in_flight; }
  double total() const { return weights + gradients + optimizer + activations(); }
};

struct StageWork {
  int first_layer = 0;
  int num_layers = 0;
  Pass forward;
  Pass backward;
  double optimizer_s = 0;
  double params_per_gpu = 0;  // parameters this GPU holds
  double grad_bytes = 0;      // gradient bytes this GPU all-reduces over its DP group
  double p2p_bytes = 0;       // activation (or gradient) bytes sent to a neighbour stage
  StageMemory memory;
};

struct Workload {
  std::vector<StageWork> stages;
  double total_params = 0;
  double model_flops_per_step = 0;     // all GPUs, one global batch
  double hardware_flops_per_step = 0;  // with recomputation
};

// Builds the per-stage work of `scenario` from the Megatron cost model (layer_ops.h) timed by
// the GPU's compute model. Requires a validated scenario. Throws PlanError for plan features
// the workload does not model yet.
Workload build_workload(const Scenario& scenario);

// Returns the parameter count of one transformer layer (whole layer, not a TP shard).
double layer_params(const ModelSpec& model);
// Returns the model's parameter count (embeddings counted once).
double model_params(const ModelSpec& model);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_STAGE_WORK_H_
