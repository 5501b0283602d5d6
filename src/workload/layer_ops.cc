#include "workload/layer_ops.h"

namespace trident {
namespace {

Op gemm(const char* name, double m, double n, double k, double batch = 1) {
  Op op;
  op.name = name;
  op.kind = OpKind::kGemm;
  op.gemm = GemmShape{m, n, k, batch};
  return op;
}

Op memory(const char* name, double bytes) {
  Op op;
  op.name = name;
  op.kind = OpKind::kMemory;
  op.bytes = bytes;
  return op;
}

Op all_reduce(const char* name, double bytes, bool overlaps_next = false) {
  Op op;
  op.name = name;
  op.kind = OpKind::kTpAllReduce;
  op.bytes = bytes;
  op.overlaps_next = overlaps_next;
  return op;
}

}  // namespace

LayerDims make_layer_dims(const ModelSpec& model, const PlanSpec& plan) {
  LayerDims d;
  d.b = plan.micro_batch_size;
  d.s = model.seq_length;
  d.h = model.hidden_size;
  d.a = model.num_attention_heads;
  d.g = model.num_query_groups;
  d.f = static_cast<double>(model.ffn_hidden_size);
  d.v = static_cast<double>(model.vocab_size);
  d.t = plan.tensor;
  // fp8 training keeps 16-bit activations; fp32/tf32 keep 32-bit ones.
  d.elem = plan.precision == Precision::kFp8 ? 2.0 : precision_bytes(plan.precision);
  d.swiglu = model.swiglu;
  return d;
}

// Per TP rank: tokens T = b*s, heads a/t, K/V width h*g/a each, MLP width f/t (2f/t for the
// fused gate and up projections of SwiGLU).
std::vector<Op> layer_forward_ops(const LayerDims& d) {
  const double tokens = d.b * d.s, e = d.elem, heads = d.a / d.t, hd = d.h / d.a;
  const double qkv_out = (d.h + 2 * d.h * d.g / d.a) / d.t;
  const double mlp_in = (d.swiglu ? 2 * d.f : d.f) / d.t;
  const double act_bytes = (d.swiglu ? 3 : 2) * tokens * d.f / d.t * e;
  const double score_elems = d.b * heads * d.s * d.s;
  const double bsh = tokens * d.h;
  return {
      memory("ln1", 2 * bsh * e),
      gemm("qkv", tokens, qkv_out, d.h),
      gemm("attn_scores", d.s, d.s, hd, d.b * heads),
      memory("softmax", 2 * score_elems * e),
      memory("attn_dropout", score_elems * (2 * e + 1)),
      gemm("attn_values", d.s, hd, d.s, d.b * heads),
      gemm("attn_proj", tokens, d.h, d.h / d.t),
      all_reduce("tp_ar_attn", bsh * e),
      memory("dropout_residual1", bsh * (3 * e + 1)),
      memory("ln2", 2 * bsh * e),
      gemm("fc1", tokens, mlp_in, d.h),
      memory(d.swiglu ? "swiglu" : "gelu", act_bytes),
      gemm("fc2", tokens, d.h, d.f / d.t),
      all_reduce("tp_ar_mlp", bsh * e),
      memory("dropout_residual2", bsh * (3 * e + 1)),
  };
}

// Every forward GEMM has two backward GEMMs of equal FLOPs (input and weight gradients, or the
// two operand gradients of the attention products), so backward GEMM FLOPs are exactly twice
// forward. The all-reduce of an input gradient overlaps the following weight-gradient GEMM.
std::vector<Op> layer_backward_ops(const LayerDims& d) {
  const double tokens = d.b * d.s, e = d.elem, heads = d.a / d.t, hd = d.h / d.a;
  const double qkv_out = (d.h + 2 * d.h * d.g / d.a) / d.t;
  const double mlp_in = (d.swiglu ? 2 * d.f : d.f) / d.t;
  const double act_bytes = (d.swiglu ? 5 : 3) * tokens * d.f / d.t * e;
  const double score_elems = d.b * heads * d.s * d.s;
  const double bsh = tokens * d.h;
  return {
      memory("dropout_residual2_bwd", bsh * (2 * e + 1)),
      gemm("fc2_dgrad", tokens, d.f / d.t, d.h),
      gemm("fc2_wgrad", d.f / d.t, d.h, tokens),
      memory(d.swiglu ? "swiglu_bwd" : "gelu_bwd", act_bytes),
      gemm("fc1_dgrad", tokens, d.h, mlp_in),
      all_reduce("tp_ar_mlp_bwd", bsh * e, /*overlaps_next=*/true),
      gemm("fc1_wgrad", d.h, mlp_in, tokens),
      memory("ln2_bwd", 4 * bsh * e),
      memory("dropout_residual1_bwd", bsh * (2 * e + 1)),
      gemm("attn_proj_dgrad", tokens, d.h / d.t, d.h),
      gemm("attn_proj_wgrad", d.h / d.t, d.h, tokens),
      gemm("attn_values_bwd_probs", d.s, d.s, hd, d.b * heads),
      gemm("attn_values_bwd_values", d.s, hd, d.s, d.b * heads),
      memory("attn_dropout_bwd", score_elems * (2 * e + 1)),
      memory("softmax_bwd", 3 * score_elems * e),
      gemm("attn_scores_bwd_q", d.s, hd, d.s, d.b * heads),
      gemm("attn_scores_bwd_k", d.s, hd, d.s, d.b * heads),
      gemm("qkv_dgrad", tokens, d.h, qkv_out),
      all_reduce("tp_ar_attn_bwd", bsh * e, /*overlaps_next=*/true),
      gemm("qkv_wgrad", d.h, qkv_out, tokens),
      memory("ln1_bwd", 4 * bsh * e),
  };
}

std::vector<Op> embedding_forward_ops(const LayerDims& d) {
  const double bsh = d.b * d.s * d.h, e = d.elem;
  return {
      memory("embedding_lookup", 3 * bsh * e),
      all_reduce("tp_ar_embedding", bsh * e),
      memory("embedding_dropout", bsh * (2 * e + 1)),
  };
}

std::vector<Op> embedding_backward_ops(const LayerDims& d) {
  const double bsh = d.b * d.s * d.h, e = d.elem;
  return {
      memory("embedding_dropout_bwd", bsh * (2 * e + 1)),
      memory("embedding_grad_scatter", 3 * bsh * e),
  };
}

// Vocab-parallel logits and cross-entropy: two small fp32 all-reduces (row max, sum of exp).
std::vector<Op> output_forward_ops(const LayerDims& d) {
  const double tokens = d.b * d.s, e = d.elem, bsh = tokens * d.h;
  const double logits = tokens * d.v / d.t;
  return {
      memory("final_ln", 2 * bsh * e),
      gemm("logits", tokens, d.v / d.t, d.h),
      memory("cross_entropy_max", logits * e),
      all_reduce("tp_ar_ce_max", tokens * 4),
      memory("cross_entropy_sum", logits * (e + 4)),
      all_reduce("tp_ar_ce_sum", tokens * 4),
  };
}

std::vector<Op> output_backward_ops(const LayerDims& d) {
  const double tokens = d.b * d.s, e = d.elem, bsh = tokens * d.h;
  const double logits = tokens * d.v / d.t;
  return {
      memory("cross_entropy_bwd", logits * (4 + e)),
      gemm("logits_dgrad", tokens, d.h, d.v / d.t),
      all_reduce("tp_ar_logits_bwd", bsh * e, /*overlaps_next=*/true),
      gemm("logits_wgrad", d.v / d.t, d.h, tokens),
      memory("final_ln_bwd", 4 * bsh * e),
  };
}

double gemm_flops(const std::vector<Op>& ops) {
  double total = 0;
  for (const Op& op : ops) {
    if (op.kind == OpKind::kGemm) total += op.gemm.flops();
  }
  return total;
}

}  // namespace trident
