// The building of a Pass from op lists: segments closed by collectives, the context-parallel
// ring, and the marks that per-layer parameter gathers and gradient buckets read. Internal to
// the building of stage work (stage_work.cc).
#ifndef TRIDENT_WORKLOAD_PASS_SEGMENTS_H_
#define TRIDENT_WORKLOAD_PASS_SEGMENTS_H_

#include <vector>

#include "workload/layer_ops.h"
#include "workload/pass_timing.h"
#include "workload/stage_work.h"

namespace trident {

// Appends `ops` to `pass`: compute accumulates until a TP collective closes the segment; a
// collective marked overlaps_next takes the following op as its concurrent compute. With t = 1
// the collectives vanish. Each segment closed by a collective records `layer`. Under
// tp_comm_overlap a ring-exchange all-gather takes the ops up to its GEMM as its concurrent
// compute, and a pipelined reduce-scatter the GEMM before it.
void append_ops(const std::vector<Op>& ops, const PassTiming& cm, int tensor, int layer,
                Pass* pass);

// Opens a segment whose compute first uses the weights of `params` parameters gathered over
// the data-parallel group and `expert_params` over the expert-data-parallel group (a layer's
// forward under per-layer parameter gathers).
void weights_needed(double params, double expert_params, Pass* pass);

// Marks `params` (and `expert_params` of routed experts, bucketed apart) as having final
// gradients at the current end of `pass`, and closes the segment there: the next layer's
// backward opens its own, so that buckets fill as each layer's gradients are produced
// (Megatron-Core's DDP hooks, one per parameter), also where no TP collective splits the pass
// (t = 1).
void grads_done(double params, double expert_params, Pass* pass);

// Drops a trailing empty segment left by a pass that ends with a collective.
void finish_pass(Pass* pass);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_PASS_SEGMENTS_H_
