// Megatron-Core's fine-grained activation offloading of a MoE layer's expert inputs
// (--fine-grained-activation-offloading --offload-modules; TransformerConfig.offload_modules,
// megatron/core/pipeline_parallel/fine_grained_activation_offload.py): after a module's
// forward its saved input is copied to pinned host memory on a side stream and freed on the
// GPU, and it is copied back ahead of the module's backward. The copies run over the GPU's
// host link (cluster.host) beside the compute; the layer waits only for what the copy takes
// beyond the layer's own compute.
#ifndef TRIDENT_WORKLOAD_ACTIVATION_OFFLOAD_H_
#define TRIDENT_WORKLOAD_ACTIVATION_OFFLOAD_H_

#include <vector>

#include "config/cluster.h"
#include "config/model.h"
#include "config/plan.h"
#include "workload/layer_ops.h"

namespace trident {

// Returns the bytes one MoE layer offloads per micro-batch and TP rank, as
// moe_activation_delta_bytes counts them: expert_fc1 the routed copies at the experts' input
// (ETP T k L / t copies of h elements, 16 bits or their FP8 cast), moe_act the FC1 output the
// activation function saves (g f_moe / ETP 16-bit elements a copy). 0 for a dense model, without
// offloading, or when recompute_modules moe frees the MoE MLP's tensors anyway.
double offloaded_activation_bytes(const ModelSpec& model, const PlanSpec& plan);

// Returns the wait a layer's pass adds for a copy of `bytes` at `bandwidth` run beside
// `compute_s` of the pass's own kernels: what the copy takes beyond them (0 when hidden).
double offload_wait_s(double bytes, double bandwidth, double compute_s);

// Returns a kernel-free op of `seconds` (a pass waiting for its offload copy), named `name`.
Op offload_wait_op(const char* name, double seconds);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_ACTIVATION_OFFLOAD_H_
