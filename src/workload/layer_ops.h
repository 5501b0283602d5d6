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
  kAttention,     // one fused-attention kernel (flash or fused backend)
  // Context parallelism: `bytes` (per GPU) sent to the next CP rank and received from the
  // previous one, while the next op (an attention block) runs.
  kCpTransfer,
  kEpCollective,  // collective on `bytes` per GPU over the expert-parallel group (moe_ops.h)
};

struct Op {
  std::string name;
  OpKind kind = OpKind::kMemory;
  GemmShape gemm;  // kGemm only
  // kGemm: a linear layer's GEMM (weights times activations), which Transformer Engine runs
  // in FP8 under precision fp8; false for the attention products of the unfused backend.
  bool linear = false;
  AttentionShape attention;  // kAttention only
  bool backward = false;     // kAttention: the backward kernel
  double bytes = 0;          // kMemory: HBM traffic; kTpCollective: full (unsharded) buffer
  CollectiveOp collective = CollectiveOp::kAllReduce;  // kTpCollective only
  // Backward only: true when the op's collective may run concurrently with the next op
  // (Megatron overlaps the input-gradient all-reduce with the weight-gradient GEMM).
  bool overlaps_next = false;
  // kTpCollective under sequence parallelism: how Transformer Engine's userbuffers overlap it
  // with its GEMM when plan.tp_comm_overlap is on.
  TpOverlap userbuffers = TpOverlap::kNone;
  // kAttention under context parallelism: an off-diagonal block, which ranks before the block's
  // owner run as s queries over s/2 keys and ranks after it as s/2 queries over s keys; the
  // ring step waits for the slower of the two.
  bool cp_block = false;
  // kAttention: a block of the context-parallel ring; kMemory: a kernel that runs inside the
  // ring step of the block before it (its softmax correction, cp_attention.h).
  bool cp_ring = false;
  // overlaps_next: how many of the following ops run during the collective.
  int overlap_ops = 1;
  // kGemm: a grouped GEMM of `gemm.batch` experts (ComputeModel::grouped_gemm_time).
  bool grouped = false;
  // kGemm: `gemm.batch` GEMMs of one expert each, launched one after another (Megatron-Core
  // SequentialMLP, moe_grouped_gemm false): batch x ComputeModel::gemm_time of one.
  bool sequential = false;
  // A wait of this many seconds with no kernel (an activation-offload copy beyond the pass's
  // compute, activation_offload.h); negative: timed by its kind.
  double fixed_s = -1;
  // kEpCollective all-to-all: the combine (the busiest rank sends the most) rather than the
  // dispatch (it receives the most).
  bool combine = false;
  // Model FLOPs per executed FLOP: the expert GEMMs run at the busiest rank's load, but the
  // model's FLOPs are the balanced ones (1 / expert_load).
  double model_flops_scale = 1;
  // Host launch (workload/host_launch.h). `launches`: kernels the host issues for the op (a
  // grouped or sequential expert GEMM: one per local expert). `graph_module`: the
  // CudaGraphModule part of the layer the op belongs to (0: outside every layer part, as the
  // embedding and the loss). `host_sync`: the host waits for the GPU before issuing it.
  int launches = 1;
  unsigned graph_module = 0;
  bool host_sync = false;

  // FLOPs the kernel runs (GEMMs and attention; 0 for others).
  double flops() const;
  // FLOPs Megatron's model-FLOPs formula counts for it (attention: no causal halving, and the
  // backward at 2 x forward).
  double model_flops() const;
};

// Sizes one TP rank works on, derived from the model and plan.
// `s` is the tokens of one sequence a rank holds: seq_length / cp.
struct LayerDims {
  double b = 0, s = 0, h = 0, a = 0, g = 0, f = 0, v = 0, t = 1;
  double cp = 1;  // context-parallel size: attention runs as cp blocks per pass
  // plan.cp_comm_type and plan.cp_implementation (workload/cp_attention.h).
  CpCommType cp_comm = CpCommType::kP2p;
  bool cp_torch = false;
  double elem = 2;  // bytes per activation element
  bool swiglu = false;
  bool rope = false;  // rotary embeddings applied to Q and K (one kernel)
  // Local attention of this layer (workload/local_attention.h): a sliding window of `window`
  // keys, or chunks of `chunk` tokens; 0: the whole causal prefix. Set per layer only when
  // shorter than the sequence.
  double window = 0, chunk = 0;
  bool qk_norm = false;           // model.qk_layernorm: a norm on each head of Q and K
  bool attention_dropout = true;  // model.attention_dropout > 0
  bool hidden_dropout = true;     // model.hidden_dropout > 0
  // Resolved plan.attention_backend (never kAuto).
  AttentionBackend attention = AttentionBackend::kUnfused;
  // precision fp8: linear GEMMs in FP8, with a cast kernel on each GEMM input (forward) and
  // output gradient (backward) of `fp8_cast_bytes` per element.
  bool fp8 = false;
  double fp8_cast_bytes = 0;
  // precision fp4: linear GEMMs in NVFP4, each GEMM input (forward) and output gradient
  // (backward) quantized by three kernels (workload/nvfp4.h).
  bool fp4 = false;
  // Megatron sequence parallelism: norms and dropouts run on 1/t of the tokens, and each
  // all-reduce becomes an all-gather before the block and a reduce-scatter after it.
  bool sequence_parallel = false;
  // Attention head dimension (model.kv_channels) and the width of the attention output a x hd
  // (= h unless kv_channels says otherwise).
  double hd = 0, q_dim = 0;
  // Multi-latent attention (model.multi_latent_attention): ranks and per-head dimensions.
  bool mla = false;
  double q_lora = 0, kv_lora = 0, qk = 0, qk_rope = 0, v_dim = 0;
  // Mixture of experts: the MLP of a MoE layer (moe_ops.h).
  double experts = 0, topk = 0, f_moe = 0, f_shared = 0, ep = 1;
  double etp = 1;          // expert_tensor_parallel_size: the experts' GEMMs split over ETP
  double expert_load = 1;  // tokens of the busiest rank's experts / the balanced mean
  bool alltoall = false;   // moe_token_dispatcher_type alltoall (else allgather)
  bool flex = false;       // moe_token_dispatcher_type flex (DeepEP; lowering/flex_dispatch.h)
  bool shared_overlap = false;
  bool grouped_gemm = true;    // plan.moe_grouped_gemm: the experts' GEMMs as one grouped kernel
  bool dispatch_sync = false;  // PlanSpec::moe_dispatch_syncs: the forward's host-device sync
};

// Sets Op::graph_module of ops[from..] that have none to `module` (a CudaGraphModule bit).
void tag_graph_module(std::vector<Op>* ops, size_t from, unsigned module);

// `arch` resolves attention_backend auto and the FP8 cast layout.
LayerDims make_layer_dims(const ModelSpec& model, const PlanSpec& plan,
                          GpuArchitecture arch = GpuArchitecture::kUnspecified);

// HBM bytes per element of one FP8 cast kernel (16-bit in, 8-bit out) under `recipe` on
// `arch`: Hopper's FP8 GEMMs take only the TN layout, so Transformer Engine's cast writes a
// transposed copy too (cast_transpose) unless the recipe is MXFP8, whose row- and column-wise
// copies both carry E8M0 scales per 32 elements; tensorwise (current scaling) reads the
// input once more for its amax; blockwise adds an fp32 scale per 128 elements.
double fp8_cast_bytes_per_element(Fp8Recipe recipe, GpuArchitecture arch);
// Bytes per parameter of the FP8 weight copies Transformer Engine keeps (and their scales).
double fp8_weight_bytes_per_param(Fp8Recipe recipe, GpuArchitecture arch);
// Bytes of scale per FP8 element of an activation under `recipe`: 1/32 (an E8M0 scale per 32
// elements) for MXFP8, 4/128 (an fp32 scale per 1 x 128 tile) for blockwise, 0 for the
// per-tensor recipes.
double fp8_scale_bytes_per_element(Fp8Recipe recipe);
// Bytes per parameter an FP8 weight all-gather moves (fp8_param_gather): one FP8 layout and
// its scales (the transpose is made where it is used).
double fp8_gather_bytes_per_param(Fp8Recipe recipe);

// Returns the fused-attention kernel of the rank's queries over its keys (heads a/t, K/V heads
// g/t, causal), the forward or the backward pass.
Op attention_op(const char* name, const LayerDims& d, bool backward);

// Returns the forward kernels of one transformer layer on one TP rank, in execution order;
// `moe`: its MLP is a mixture of experts (moe_ops.h).
std::vector<Op> layer_forward_ops(const LayerDims& d, bool moe = false);
// Returns the backward kernels of one layer (input gradients, weight gradients, all-reduces).
std::vector<Op> layer_backward_ops(const LayerDims& d, bool moe = false);
// Embedding (first stage): vocab-parallel lookup, then an all-reduce of its output.
std::vector<Op> embedding_forward_ops(const LayerDims& d);
std::vector<Op> embedding_backward_ops(const LayerDims& d);
// Output layer (last stage): final norm, vocab-parallel logits GEMM, cross-entropy.
std::vector<Op> output_forward_ops(const LayerDims& d);
std::vector<Op> output_backward_ops(const LayerDims& d);

// Returns the sum of the model FLOPs of `ops` (Megatron's formula: what MFU counts).
double gemm_flops(const std::vector<Op>& ops);
// Returns the sum of the FLOPs `ops` run.
double executed_flops(const std::vector<Op>& ops);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_LAYER_OPS_H_
