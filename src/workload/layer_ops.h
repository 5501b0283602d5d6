// The kernels of one transformer layer (and of the embedding and output layers) as one
// tensor-parallel rank runs them: Megatron-LM's layout, where the MLP's first matrix is split by
// columns and its second by rows, attention is split by heads, and each split block ends with an
// all-reduce of the b*s*h output over the tensor-parallel group (two per layer forward, two per
// layer backward). With sequence parallelism each all-reduce is a reduce-scatter after the block
// plus an all-gather before the next one.
#ifndef TRIDENT_WORKLOAD_LAYER_OPS_H_
#define TRIDENT_WORKLOAD_LAYER_OPS_H_

#include <string>
#include <vector>

#include "config/model.h"
#include "config/plan.h"
#include "core/collective_op.h"
#include "workload/compute_model.h"

namespace trident {

enum class OpKind {
  kGemm,          // compute-bound matrix multiply (FLOPs count towards model FLOPs)
  kMemory,        // memory-bound kernel timed by HBM bandwidth
  kTpCollective,  // collective on `bytes` (the full b*s*h buffer) over the TP group
};

struct Op {
  std::string name;
  OpKind kind = OpKind::kMemory;
  GemmShape gemm;    // kGemm only
  double bytes = 0;  // kMemory: HBM traffic; kTpCollective: full (unsharded) buffer
  CollectiveOp collective = CollectiveOp::kAllReduce;  // kTpCollective only
  // Backward only: true when the op's collective may run concurrently with the next op
  // (Megatron overlaps the input-gradient all-reduce with the weight-gradient GEMM).
  bool overlaps_next = false;
};

// Sizes one TP rank works on, derived from the model and plan.
struct LayerDims {
  double b = 0, s = 0, h = 0, a = 0, g = 0, f = 0, v = 0, t = 1;
  double elem = 2;  // bytes per activation element
  bool swiglu = false;
  // Megatron sequence parallelism: norms and dropouts run on 1/t of the tokens, and each
  // all-reduce becomes an all-gather before the block and a reduce-scatter after it.
  bool sequence_parallel = false;
};

LayerDims make_layer_dims(const ModelSpec& model, const PlanSpec& plan);

// Returns the forward kernels of one transformer layer on one TP rank, in execution order.
std::vector<Op> layer_forward_ops(const LayerDims& d);
// Returns the backward kernels of one layer (input gradients, weight gradients, all-reduces).
std::vector<Op> layer_backward_ops(const LayerDims& d);
// Embedding (first stage): vocab-parallel lookup, then an all-reduce of its output.
std::vector<Op> embedding_forward_ops(const LayerDims& d);
std::vector<Op> embedding_backward_ops(const LayerDims& d);
// Output layer (last stage): final norm, vocab-parallel logits GEMM, cross-entropy.
std::vector<Op> output_forward_ops(const LayerDims& d);
std::vector<Op> output_backward_ops(const LayerDims& d);

// Returns the sum of GEMM FLOPs of `ops` (what counts as model FLOPs).
double gemm_flops(const std::vector<Op>& ops);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_LAYER_OPS_H_
