// Which parameter all-gathers a stage runs ahead of its compute, and which segment waits for
// which (pure, no SimGrid): the distributed optimizer's buckets behind the forward
// (overlap_param_gather) and the per-layer gathers of sharded weights (optim_grads_params).
#ifndef TRIDENT_LOWERING_PARAM_GATHERS_H_
#define TRIDENT_LOWERING_PARAM_GATHERS_H_

#include <vector>

#include "workload/stage_work.h"

namespace trident {

// All-gathers run one after another in `unit_params` order (one communication stream);
// waits[c][i] is the last unit segment i of chunk c's pass needs done first (-1: none).
// expert[u] != 0: unit u holds routed experts, gathered over the expert-data-parallel group
// (empty: every unit over the data-parallel group).
struct GatherSchedule {
  std::vector<double> unit_params;
  std::vector<std::vector<int>> waits;
  std::vector<char> expert;
};

// overlap_param_gather: each chunk's gradient buckets as Megatron-Core builds them
// (megatron/core/distributed/param_and_grad_buffer.py: parameters in backward order, a bucket
// closed once it holds `bucket_params`, so the bucket of the first layers is the remainder),
// gathered in forward order, chunk after chunk; waits index the chunks' forward segments.
// Experts the forward marks (expert_weight_params) have buckets of their own, of
// stage.expert_grad_bucket_params (Megatron-Core's DDP keeps them in a separate buffer),
// gathered on the same stream in order of first use: a segment's dense buckets, then its
// expert ones.
GatherSchedule bucket_gathers(const StageWork& stage, double bucket_params);

// optim_grads_params: one gather per segment of `pass` that first uses weights (its
// weight_params), in pass order (Megatron-Core FSDP's per-unit gathers), followed by one of
// its expert_weight_params (the same unit's expert parameter group, over the expert-data
// group); the segment waits for both. waits has one row.
GatherSchedule layer_gathers(const Pass& pass);

}  // namespace trident

#endif  // TRIDENT_LOWERING_PARAM_GATHERS_H_
