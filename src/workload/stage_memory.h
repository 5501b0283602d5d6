// The bytes a stage's parameters take (weights, gradients, optimizer state) and the peak of
// activations its schedule holds. Internal to the building of stage work (stage_work.cc); the
// public terms (master_param_bytes, layer_params, memory_margin_bytes) are in stage_work.h.
#ifndef TRIDENT_WORKLOAD_STAGE_MEMORY_H_
#define TRIDENT_WORKLOAD_STAGE_MEMORY_H_

#include <vector>

#include "config/scenario.h"
#include "layout/program.h"
#include "workload/stage_work.h"

namespace trident {

// Returns the bytes per parameter of gradients: Megatron accumulates and reduces bf16 gradients in
// fp32, or in bf16 with grad_reduce_in_bf16 (DistributedDataParallelConfig.grad_reduce_in_fp32
// off).
double grad_element_bytes(const PlanSpec& p);
// Returns the bytes of Adam state per parameter: master weights, momentum and variance, fp32 unless
// the precision-aware optimizer keeps them narrower (12 B by default).
double optimizer_state_bytes(const PlanSpec& p);
// Returns the HBM traffic of one fused Adam update per parameter: read master, main gradient,
// momentum and variance, write master, momentum and variance, and the 16-bit weights (2 B): 30 B in
// fp32.
double adam_bytes_per_param(const PlanSpec& p);

// Returns the weights, gradients and optimizer state per GPU of `params` parameters per GPU sharded
// over a group of `d` GPUs (the dp-cp group for dense weights, the expert-data-parallel group for
// routed experts; `layer`: the largest FSDP unit's, `bucket`: one gradient bucket's), under
// plan.dp_sharding:
//   weights    params w, or with optim_grads_params and d > 1 params w / d + 2 layer w (the
//              layer in use and the one prefetched, gathered whole)
//   gradients  params g, or with optim_grads / optim_grads_params and d > 1 params g / d + the
//              bucket (or layer) being reduced, unsharded; with grad_reduce_in_bf16 (g = 2)
//              the fp32 main gradients the optimizer steps on, 4 params / (d when sharded),
//              go to step_main_grads (held during the step only), unless the
//              precision-aware optimizer steps on bf16 main gradients
//   optimizer  12 params (master weights and moments, each in its state dtype), / d
//              unless no_shard
StageMemory sharded_memory(const PlanSpec& plan, double d, double params, double layer,
                           double bucket, double weight_elem, double grad_elem);

// Walks each stage's program and records the peak bytes (and count) of chunk activations
// forwarded but not yet backwarded into its StageMemory. Requires w->stages to hold one stage
// per program, with the chunks the programs run and their activation_bytes.
void schedule_memory(const std::vector<StageProgram>& programs, Workload* w);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_STAGE_MEMORY_H_
