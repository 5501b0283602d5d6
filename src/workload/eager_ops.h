// Element-wise work as eager PyTorch runs it (plan.stack elementwise: eager): every op of the
// model's Python code is its own kernel reading and writing HBM, where Transformer Engine (and
// torch.compile's Inductor) run one fused kernel per block. The kernels are those of torchtitan's
// Llama (pytorch/torchtitan@9dec370, the commit of its Dec 2024 H100 benchmarks) and of the
// autograd functions PyTorch records for them; docs/stacks.md lists them with their bytes.
#ifndef TRIDENT_WORKLOAD_EAGER_OPS_H_
#define TRIDENT_WORKLOAD_EAGER_OPS_H_

#include <vector>

#include "workload/layer_ops.h"

namespace trident {

// Returns `ops` (a forward or backward op list of layer_ops.h, built from `d`) with each fused
// element-wise kernel replaced by the eager kernels that do its work: RMSNorm (`rms_norm`; a
// LayerNorm is one native kernel in eager PyTorch too), rotary embeddings, the SwiGLU gate,
// dropout before a residual add, the grouped-query K/V expansion and the attention output's
// copy around scaled_dot_product_attention, and the fp32 cross-entropy. Other ops are kept.
std::vector<Op> eager_ops(const std::vector<Op>& ops, const LayerDims& d, bool rms_norm);

// torchtitan's op-level selective activation checkpointing (torchtitan/parallelisms/
// parallelize_llama.py:214-260@9dec370): the backward recomputes every op of the layer's
// forward whose output was not saved: all element-wise kernels and every second matmul
// (counted per layer: wq, wk, wv, wo, w1, w3, w2 saves the odd ones, so wk, wo and w3 rerun);
// attention's output is saved. Returns those ops of `forward` (a layer's forward op list).
std::vector<Op> alternate_matmul_recompute(const std::vector<Op>& forward, const LayerDims& d);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_EAGER_OPS_H_
