// Context-parallel attention as the kernels and transfers one rank runs for one layer and pass
// (docs/context-parallel.md). The sequence sits on cp ranks in 2 × cp chunks, rank r holding
// chunks r and 2cp-1-r (causal load balance: Megatron-Core get_batch_on_this_cp_rank,
// PyTorch's round-robin/head-tail balancer), so every rank does the same causal work. Three
// ways to run it, as Transformer Engine names them
// (transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py):
//
//  - p2p (AttnFuncWithCPAndKVP2P): cp blocks; block 0 the local causal attention over the
//    rank's s = seq/cp tokens, blocks 1..cp-1 unmasked, s queries over s/2 keys (or s/2 over
//    s); the K/V of block i+1 moves to the next rank while block i runs. Each block merges its
//    partial output through its softmax statistics (LSE correction), and the backward passes
//    the partial dK/dV one hop on with the next K/V.
//  - all_gather (AttnFuncWithCPAndKVAllGather): K/V of the whole sequence all-gathered before
//    the attention (exposed); each local chunk attends its causal prefix; dK/dV
//    reduce-scattered after the backward.
//  - a2a (AttnFuncWithCPAndQKVOA2A, DeepSpeed-Ulysses): Q, K, V all-to-all so each rank
//    holds the whole sequence for heads / cp, one causal attention, the output all-to-all
//    back; exposed.
//
// PyTorch's context_parallel (cp_implementation torch; torch/distributed/tensor/experimental/
// _attention.py _templated_ring_attention, as torchtitan calls it) runs the p2p structure
// with its own costs: K/V rotated by one all-gather beside block 0 (rotate method allgather,
// torchtitan's default) or one hop per step (alltoall, our p2p); partial outputs converted to
// fp32 and merged by element-wise kernels (_SDPAMerger); dQ, dK, dV accumulated in fp32 and
// dK/dV passed on in fp32 (convert_to_f32); K/V exchanged with every query head, because
// torchtitan's models repeat the K/V heads before SDPA (torchtitan/models/llama/model.py
// repeat_kv @ 9dec370).
#ifndef TRIDENT_WORKLOAD_CP_ATTENTION_H_
#define TRIDENT_WORKLOAD_CP_ATTENTION_H_

#include <vector>

#include "workload/layer_ops.h"

namespace trident {

// Returns the ops of one layer's attention pass under context parallelism (d.cp >= 2) for
// d.cp_comm and d.cp_torch. A kCpTransfer with overlaps_next runs beside the attention block
// after it (and the LSE-correction kernels marked cp_ring that follow the block); one without
// is exposed (the GPU waits for it).
std::vector<Op> cp_attention_ops(const LayerDims& d, bool backward);
// p2p, as above. Returns the ops of one pass (cp >= 2).
std::vector<Op> ring_attention_ops(const LayerDims& d, bool backward);
// Returns the bytes of one rank's K and V blocks (s tokens) as the ring exchanges them: g/t
// heads each, or a/t under cp_implementation torch (K/V repeated to every query head).
double cp_kv_bytes(const LayerDims& d);
// Returns the transient bytes one rank's context-parallel attention holds beyond the layer's
// activations, at its peak over forward and backward (docs/context-parallel.md, "Memory").
double cp_buffer_bytes(const LayerDims& d);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_CP_ATTENTION_H_
