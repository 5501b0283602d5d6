#include "workload/layer_activations.h"

#include "workload/layer_ops.h"
#include "workload/nvfp4.h"
#include "workload/stage_work.h"

namespace trident {

namespace {

// The dense MLP's saved tensors per element of s b h / t (M core/transformer/mlp.py:257-336,
// MLP.forward): the activation function saves its input, the FC1 output g f / t wide, in 16
// bits (fusions/fused_bias_swiglu.py:184, 235 for SwiGLU, g = 2; bias_gelu and squared ReLU,
// activations.py:9-12, g = 1), and FC2 (TE Linear) saves its input, f / t wide, in 16 bits or
// as its FP8 cast with the recipe's scales (TE module/linear.py:619-661). (2g + 2) f / h: 16 for
// GPT's f = 4h, 21 for Llama-3 70B's SwiGLU with f = 3.5h.
double dense_mlp_coefficient(const ModelSpec& m, const PlanSpec& p) {
  const double g = m.swiglu ? 2 : 1, f = double(m.ffn_hidden_size) / m.hidden_size;
  return (2 * g + saved_linear_input_bytes(p)) * f;
}

}  // namespace

double saved_linear_input_bytes(const PlanSpec& p) {
  if (p.precision == Precision::kFp4) return kNvfp4BytesPerElement;
  if (p.precision == Precision::kFp8) return 1 + fp8_scale_bytes_per_element(p.fp8_recipe);
  return 2;
}

double dense_mlp_activation_bytes(const ModelSpec& m, const PlanSpec& p) {
  if (p.recompute == Recompute::kFull) return 0;
  const double sbh = double(p.micro_batch_size) * m.seq_length / p.context * m.hidden_size;
  return dense_mlp_coefficient(m, p) * sbh / p.tensor;
}

double alternate_matmul_activation_bytes(const ModelSpec& m, const PlanSpec& p) {
  const double sbh = double(p.micro_batch_size) * m.seq_length / p.context * m.hidden_size;
  const double t = p.tensor, f = double(m.ffn_hidden_size) / m.hidden_size;
  const double kv = double(m.num_query_groups) / m.num_attention_heads;
  // torchtitan's op-level policy (parallelize_llama.py _save_list, 9dec370) saves the 1st, 3rd,
  // 5th and 7th matmul of a layer (wq, wv, w1, w2; wk, wo and w3 are recomputed) and the
  // attention's output; the checkpoint keeps the layer's input. All 16-bit. The gated MLP's
  // w1 output is f wide; w2's output and the input are the residual stream (split over t
  // only under sequence parallelism).
  const double split = 2 + 2 * kv + 2 + 2 * f;  // wq, wv, attention, w1 outputs
  const double residual = 2 + 2;                // the layer's input, w2's output
  return p.sequence_parallel ? (split + residual) * sbh / t : sbh * (residual + split / t);
}

double layer_activation_bytes(const ModelSpec& m, const PlanSpec& p, GpuArchitecture arch) {
  // A context-parallel rank keeps the activations of its seq_length / cp tokens.
  const double s = double(m.seq_length) / p.context;
  const double sbh = double(p.micro_batch_size) * s * m.hidden_size;
  const double t = p.tensor, a = m.num_attention_heads, h = m.hidden_size;
  const bool sp = p.sequence_parallel;
  // Korthikanti's 34 s b h include the two 1-byte hidden-dropout masks (in the part that is
  // not tensor-parallel); without hidden dropout they are not kept.
  const double masks = m.hidden_dropout > 0 ? 2 : 0;
  const double replicated = 8 + masks;  // of the 10 that t does not divide
  // The attention core: unfused keeps the s x s softmax output (2 a s^2 b bytes) and, with
  // attention dropout, its mask and output (3 more); flash / fused keep only the fp32
  // log-sum-exp per query and head (4 a s b bytes), besides Q, K, V and the output already in
  // the 34.
  const bool unfused =
      resolve_attention_backend(p.attention_backend, arch) == AttentionBackend::kUnfused;
  const double core =
      unfused ? (m.attention_dropout > 0 ? 5 : 2) * a * s / (h * t) : 4 * a / (h * t);
  // Of the attention's 8 that t divides, Q, K and V take 6 (2 each; with grouped-query
  // attention K and V are g/a of Q) and the projection's input 2. The MLP's part is
  // dense_mlp_activation_bytes (Korthikanti's 16 for f = 4h without gating).
  const double mlp = dense_mlp_coefficient(m, p);
  double sharded = 8 - 4 * (1 - double(m.num_query_groups) / m.num_attention_heads) + mlp;
  // qk_layernorm: the norms save their input, Q and K before the norm (16 bits; a s b hd + g s b hd
  // elements).
  if (m.qk_layernorm && !m.multi_latent_attention) {
    sharded += 2.0 * m.head_dim() * (m.num_attention_heads + m.num_query_groups) / h;
  }
  double replicated_kept = replicated;
  if (p.precision == Precision::kFp8 || p.precision == Precision::kFp4) {
    // Transformer Engine saves a linear layer's input for the weight gradient in FP8, as the
    // GEMM read it (transformer_engine/pytorch/module/linear.py and layernorm_linear.py /
    // layernorm_mlp.py save the FP8-cast input or layer-norm output, not the 16-bit one): the
    // QKV and FC1 inputs (2 + 2 of the replicated part) drop to the saved copy's bytes (the
    // FC2 input's is in `mlp`); the projection's input is the attention output, which the
    // attention keeps in 16 bits for its own backward, so its low-precision copy adds one.
    // Block-scaled FP8 recipes add their scales (1/32 or 4/128 of a byte); NVFP4 saves the
    // column-wise (Hadamard-transformed) copy the wgrad GEMM reads (TE module/linear.py keeps
    // the input with columnwise usage only).
    const double kept = saved_linear_input_bytes(p);
    replicated_kept -= 2 * (2 - kept);
    sharded += kept;
  }
  switch (p.recompute) {
    case Recompute::kFull:
      return sp ? 2 * sbh / t : 2 * sbh;
    case Recompute::kSelective:
      if (p.stack.selective_recompute == SelectiveRecompute::kAlternateMatmuls) {
        return alternate_matmul_activation_bytes(m, p);
      }
      {
        // Megatron's recompute_modules without core_attn keep the attention core's tensors.
        const double kept_core = p.recomputes(kRecomputeCoreAttn) ? 0 : core;
        return sp ? sbh * ((sharded + replicated_kept) / t + kept_core)
                  : sbh * (replicated_kept + sharded / t + kept_core);
      }
    case Recompute::kNone:
      break;
  }
  if (sp) return sbh * ((sharded + replicated_kept) / t + core);
  return sbh * (replicated_kept + sharded / t + core);
}

}  // namespace trident
