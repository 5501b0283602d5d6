#include "workload/layer_ops.h"

#include <algorithm>
#include <string>
#include <utility>

#include "workload/cp_attention.h"
#include "workload/local_attention.h"
#include "workload/moe_ops.h"
#include "workload/nvfp4.h"

namespace trident {
namespace {

Op gemm(const char* name, double m, double n, double k, double batch = 1) {
  Op op;
  op.name = name;
  op.kind = OpKind::kGemm;
  op.gemm = GemmShape{m, n, k, batch};
  return op;
}

// A GEMM over a causal attention's s x s scores (unfused attention): it runs the whole
// matrix, but Megatron-LM's model FLOPs count the half the causal mask keeps, and of a local
// layer (window, chunks: Megatron's unfused softmax masks them) the pairs its mask keeps.
Op score_gemm(const char* name, double m, double n, double k, double batch, const LayerDims& d) {
  Op op = gemm(name, m, n, k, batch);
  const double pairs = layer_local_pairs(d, LocalPart::kWhole);
  op.model_flops_scale = pairs > 0 ? pairs / (d.s * d.s) : 0.5;
  return op;
}

Op memory(const char* name, double bytes) {
  Op op;
  op.name = name;
  op.kind = OpKind::kMemory;
  op.bytes = bytes;
  return op;
}

Op tp_collective(const char* name, CollectiveOp coll, double bytes, bool overlaps_next = false) {
  Op op;
  op.name = name;
  op.kind = OpKind::kTpCollective;
  op.collective = coll;
  op.bytes = bytes;
  op.overlaps_next = overlaps_next;
  return op;
}

Op all_reduce(const char* name, double bytes, bool overlaps_next = false) {
  return tp_collective(name, CollectiveOp::kAllReduce, bytes, overlaps_next);
}

// Appends `op` to `ops`.
void add(std::vector<Op>* ops, Op op) { ops->push_back(std::move(op)); }

}  // namespace

void tag_graph_module(std::vector<Op>* ops, size_t from, unsigned module) {
  for (size_t i = from; i < ops->size(); ++i) {
    if ((*ops)[i].graph_module == 0) (*ops)[i].graph_module = module;
  }
}

double Op::flops() const {
  if (kind == OpKind::kGemm) return gemm.flops();
  if (kind == OpKind::kAttention) return attention.flops(backward);
  return 0;
}

double Op::model_flops() const {
  if (kind == OpKind::kGemm) return gemm.flops() * model_flops_scale;
  if (kind == OpKind::kAttention) return attention.model_flops(backward);
  return 0;
}

double fp8_cast_bytes_per_element(Fp8Recipe recipe, GpuArchitecture arch) {
  switch (recipe) {
    case Fp8Recipe::kMxfp8:
      return 2 + 2 * (1 + 1.0 / 32);  // row- and column-wise FP8, one E8M0 scale per 32
    case Fp8Recipe::kBlockwise:
      return 2 + 2 * (1 + 4.0 / 128);  // both layouts, one fp32 scale per 128 (1x128 tiles)
    case Fp8Recipe::kTensorwise:
      return 2 + 2 + (arch == GpuArchitecture::kBlackwell ? 1 : 2);  // amax pass, then cast
    case Fp8Recipe::kDelayed:
      break;
  }
  return 2 + (arch == GpuArchitecture::kBlackwell ? 1 : 2);  // amax fused into the cast
}

double fp8_scale_bytes_per_element(Fp8Recipe recipe) {
  switch (recipe) {
    case Fp8Recipe::kMxfp8:
      return 1.0 / 32;
    case Fp8Recipe::kBlockwise:
      return 4.0 / 128;
    case Fp8Recipe::kDelayed:
    case Fp8Recipe::kTensorwise:
      break;
  }
  return 0;
}

double fp8_weight_bytes_per_param(Fp8Recipe recipe, GpuArchitecture arch) {
  switch (recipe) {
    case Fp8Recipe::kMxfp8:
      return 2 * (1 + 1.0 / 32);
    case Fp8Recipe::kBlockwise:
      return 2 * (1 + 4.0 / (128 * 128));  // 128x128 weight blocks
    case Fp8Recipe::kDelayed:
    case Fp8Recipe::kTensorwise:
      break;
  }
  return arch == GpuArchitecture::kBlackwell ? 1 : 2;  // Hopper keeps the transpose too
}

double fp8_gather_bytes_per_param(Fp8Recipe recipe) {
  switch (recipe) {
    case Fp8Recipe::kMxfp8:
      return 1 + 1.0 / 32;
    case Fp8Recipe::kBlockwise:
      return 1 + 4.0 / (128 * 128);
    case Fp8Recipe::kDelayed:
    case Fp8Recipe::kTensorwise:
      break;
  }
  return 1;
}

LayerDims make_layer_dims(const ModelSpec& model, const PlanSpec& plan, GpuArchitecture arch) {
  LayerDims d;
  d.b = plan.micro_batch_size;
  d.cp = plan.context;
  d.cp_comm = plan.cp_comm_type;
  d.cp_torch = plan.cp_implementation == CpImplementation::kTorch;
  d.s = double(model.seq_length) / plan.context;
  d.h = model.hidden_size;
  d.a = model.num_attention_heads;
  d.g = model.num_query_groups;
  d.f = static_cast<double>(model.ffn_hidden_size);
  d.v = static_cast<double>(model.vocab_size);
  d.t = plan.tensor;
  // fp8 and fp4 training keep 16-bit activations; fp32/tf32 keep 32-bit ones.
  d.fp4 = plan.precision == Precision::kFp4;
  d.elem = plan.precision == Precision::kFp8 || d.fp4 ? 2.0 : precision_bytes(plan.precision);
  d.swiglu = model.swiglu;
  d.rope = model.rotary_position_embeddings;
  d.qk_norm = model.qk_layernorm && !model.multi_latent_attention;
  d.attention_dropout = model.attention_dropout > 0;
  d.hidden_dropout = model.hidden_dropout > 0;
  d.attention = resolve_attention_backend(plan.attention_backend, arch);
  d.fp8 = plan.precision == Precision::kFp8;
  d.fp8_cast_bytes = d.fp8 ? fp8_cast_bytes_per_element(plan.fp8_recipe, arch) : 0;
  d.sequence_parallel = plan.sequence_parallel;
  d.hd = model.head_dim();
  d.q_dim = d.a * d.hd;
  d.mla = model.multi_latent_attention;
  if (d.mla) {
    d.q_lora = model.q_lora_rank;
    d.kv_lora = model.kv_lora_rank;
    d.qk = model.qk_head_dim;
    d.qk_rope = model.qk_pos_emb_head_dim;
    d.v_dim = model.v_head_dim;
    // One head dimension for the attention kernel: the mean of the QK (qk + rope) and V
    // widths keeps its FLOPs (2 s^2 (qk + rope) + 2 s^2 v per head) exact.
    d.hd = (d.qk + d.qk_rope + d.v_dim) / 2;
    d.q_dim = d.a * d.v_dim;
    d.g = d.a;
  }
  if (model.moe()) {
    d.experts = model.num_experts;
    d.topk = model.moe_router_topk;
    d.f_moe = static_cast<double>(model.moe_ffn_hidden_size);
    d.f_shared = static_cast<double>(model.moe_shared_expert_intermediate_size);
    d.ep = plan.expert_parallel;
    d.etp = plan.expert_tensor();
    d.expert_load = moe_expert_load(model, plan);
    d.alltoall = plan.moe_dispatcher == MoeDispatcher::kAllToAll;
    d.flex = plan.moe_dispatcher == MoeDispatcher::kFlex;
    d.shared_overlap = plan.moe_shared_expert_overlap;
    d.grouped_gemm = plan.moe_grouped_gemm;
    d.dispatch_sync = plan.moe_dispatch_syncs();
  }
  return d;
}

namespace {

Op linear(const char* name, double m, double n, double k) {
  Op op = gemm(name, m, n, k);
  op.linear = true;
  return op;
}

constexpr TpOverlap kRing = TpOverlap::kRingExchange;
constexpr TpOverlap kPipe = TpOverlap::kPipeline;
constexpr TpOverlap kBulk = TpOverlap::kBulk;

// Marks a sequence-parallel collective with the userbuffers method that overlaps it.
Op ub(Op op, TpOverlap method) {
  op.userbuffers = method;
  return op;
}

// Under fp8, the cast of `elems` 16-bit elements to FP8 (with amax and scales) before a
// linear GEMM.
// Under fp4, the three NVFP4 quantization kernels instead (nvfp4.h), named after the cast.
void add_cast(std::vector<Op>* ops, const LayerDims& d, const char* name, double elems) {
  if (d.fp8) add(ops, memory(name, elems * d.fp8_cast_bytes));
  if (!d.fp4) return;
  const std::string what = std::string(name).substr(sizeof("fp8_cast_") - 1);
  const Nvfp4QuantizeBytes q;
  for (const auto& [kernel, bytes] : {std::pair<const char*, double>{"nvfp4_amax_", q.amax},
                                      {"nvfp4_cast_", q.rowwise},
                                      {"nvfp4_rht_cast_", q.columnwise}}) {
    add(ops, memory((kernel + what).c_str(), elems * bytes));
  }
}

}  // namespace

Op attention_op(const char* name, const LayerDims& d, bool backward) {
  Op op;
  op.name = name;
  op.kind = OpKind::kAttention;
  op.attention = AttentionShape{d.b, d.a / d.t, d.g / d.t, d.s, d.hd, true};
  // A local layer's kernel keeps only its window's or chunks' pairs; under context
  // parallelism cp_attention.cc sets them for its own blocks.
  if (d.cp <= 1) op.attention.pairs = layer_local_pairs(d, LocalPart::kWhole);
  op.backward = backward;
  return op;
}

// Per TP rank: tokens T = b*s, heads a/t, K/V width h*g/a each, MLP width f/t (2f/t for the
// fused gate and up projections of SwiGLU). `sp` = 1/t of the tokens under sequence parallelism.
// Unfused attention: QK^T, softmax (and dropout) over the s x s scores in HBM, attention over
// V (Megatron 2020-22). Flash / fused: one kernel, no s x s tensor in HBM.
std::vector<Op> layer_forward_ops(const LayerDims& d, bool moe) {
  const double tokens = d.b * d.s, e = d.elem, heads = d.a / d.t, hd = d.hd;
  const double qkv_out = (d.q_dim + 2 * d.hd * d.g) / d.t;
  const double mlp_in = (d.swiglu ? 2 * d.f : d.f) / d.t;
  const double act_bytes = (d.swiglu ? 3 : 2) * tokens * d.f / d.t * e;
  const double score_elems = d.b * heads * d.s * d.s;
  const double bsh = tokens * d.h;
  const bool sp = d.sequence_parallel;
  const double local = sp ? bsh / d.t : bsh;  // elements a norm or dropout touches
  // Bias-dropout-add (or just the residual add without dropout).
  const double residual_bytes = local * (3 * e + (d.hidden_dropout ? 1 : 0));
  std::vector<Op> ops;
  add(&ops, memory("ln1", 2 * local * e));
  if (sp) add(&ops, ub(tp_collective("tp_ag_attn", CollectiveOp::kAllGather, bsh * e), kRing));
  add_cast(&ops, d, "fp8_cast_qkv", bsh);
  if (d.mla) {
    add_mla_forward(d, &ops);
  } else {
    add(&ops, linear("qkv", tokens, qkv_out, d.h));
    // Megatron-Core attention.py: q_layernorm and k_layernorm (TENorm over each head's hd
    // elements) after the QKV split, before RoPE; one fused kernel reading and writing Q and K.
    if (d.qk_norm) add(&ops, memory("qk_norm", 2 * tokens * (d.hd * (d.a + d.g)) / d.t * e));
    if (d.rope) add(&ops, memory("rope", 2 * tokens * (d.hd * (d.a + d.g)) / d.t * e));  // Q, K
  }
  if (d.attention == AttentionBackend::kUnfused) {
    add(&ops, score_gemm("attn_scores", d.s, d.s, hd, d.b * heads, d));
    add(&ops, memory("softmax", 2 * score_elems * e));
    if (d.attention_dropout) add(&ops, memory("attn_dropout", score_elems * (2 * e + 1)));
    add(&ops, score_gemm("attn_values", d.s, hd, d.s, d.b * heads, d));
  } else if (d.cp > 1) {
    for (Op& op : cp_attention_ops(d, false)) add(&ops, std::move(op));
  } else {
    add(&ops, attention_op("attention", d, false));
  }
  add_cast(&ops, d, "fp8_cast_proj", tokens * d.q_dim / d.t);
  add(&ops, linear("attn_proj", tokens, d.h, d.q_dim / d.t));
  add(&ops, sp ? ub(tp_collective("tp_rs_attn", CollectiveOp::kReduceScatter, bsh * e), kPipe)
               : all_reduce("tp_ar_attn", bsh * e));
  add(&ops, memory(d.hidden_dropout ? "dropout_residual1" : "residual1", residual_bytes));
  // Megatron-Core TransformerLayer._forward_attention (norm, attention, bias-dropout-add), then
  // _forward_mlp: the parts --cuda-graph-scope names (transformer_layer.py).
  tag_graph_module(&ops, 0, kGraphAttn);
  const size_t mlp_from = ops.size();
  add(&ops, memory("ln2", 2 * local * e));
  if (sp) {
    const Op ag = tp_collective("tp_ag_mlp", CollectiveOp::kAllGather, bsh * e);
    add(&ops, moe ? ag : ub(ag, kRing));
  }
  if (moe) {
    tag_graph_module(&ops, mlp_from, kGraphMoeRouter);  // the pre-MLP norm goes with the router
    add_moe_mlp_forward(d, &ops);
  } else {
    add_cast(&ops, d, "fp8_cast_fc1", bsh);
    add(&ops, linear("fc1", tokens, mlp_in, d.h));
    add(&ops, memory(d.swiglu ? "swiglu" : "gelu", act_bytes));
    add_cast(&ops, d, "fp8_cast_fc2", tokens * d.f / d.t);
    add(&ops, linear("fc2", tokens, d.h, d.f / d.t));
  }
  const Op rs_mlp = tp_collective("tp_rs_mlp", CollectiveOp::kReduceScatter, bsh * e);
  add(&ops, sp ? (moe ? rs_mlp : ub(rs_mlp, kPipe)) : all_reduce("tp_ar_mlp", bsh * e));
  add(&ops, memory(d.hidden_dropout ? "dropout_residual2" : "residual2", residual_bytes));
  tag_graph_module(&ops, mlp_from, moe ? kGraphMoe : kGraphMlp);
  return ops;
}

// Every forward GEMM has two backward GEMMs of equal FLOPs (input and weight gradients, or the
// two operand gradients of the attention products), so backward GEMM FLOPs are exactly twice
// forward. The collective on an input gradient overlaps the following weight-gradient GEMM.
// Under sequence parallelism the gradient of a reduce-scatter is an all-gather and vice versa.
// Under fp8 each linear layer's output gradient is cast to FP8 before its two GEMMs.
std::vector<Op> layer_backward_ops(const LayerDims& d, bool moe) {
  const double tokens = d.b * d.s, e = d.elem, heads = d.a / d.t, hd = d.hd;
  const double qkv_out = (d.q_dim + 2 * d.hd * d.g) / d.t;
  const double mlp_in = (d.swiglu ? 2 * d.f : d.f) / d.t;
  const double act_bytes = (d.swiglu ? 5 : 3) * tokens * d.f / d.t * e;
  const double score_elems = d.b * heads * d.s * d.s;
  const double bsh = tokens * d.h;
  const bool sp = d.sequence_parallel;
  const double local = sp ? bsh / d.t : bsh;
  const auto input_grad = [&](const char* ar, const char* rs) {
    return sp ? ub(tp_collective(rs, CollectiveOp::kReduceScatter, bsh * e, true), kBulk)
              : all_reduce(ar, bsh * e, true);
  };
  std::vector<Op> ops;
  if (d.hidden_dropout) add(&ops, memory("dropout_residual2_bwd", local * (2 * e + 1)));
  if (sp) {
    const Op ag = tp_collective("tp_ag_mlp_bwd", CollectiveOp::kAllGather, bsh * e);
    add(&ops, moe ? ag : ub(ag, kRing));
  }
  if (moe) {
    add_moe_mlp_backward(d, &ops);
    add(&ops, input_grad("tp_ar_mlp_bwd", "tp_rs_mlp_bwd"));
    Op router_wgrad = linear("router_wgrad", d.h, d.experts, tokens);
    router_wgrad.graph_module = kGraphMoeRouter;
    add(&ops, router_wgrad);
  } else {
    add_cast(&ops, d, "fp8_cast_fc2_grad", bsh);
    add(&ops, linear("fc2_dgrad", tokens, d.f / d.t, d.h));
    add(&ops, linear("fc2_wgrad", d.f / d.t, d.h, tokens));
    add(&ops, memory(d.swiglu ? "swiglu_bwd" : "gelu_bwd", act_bytes));
    add_cast(&ops, d, "fp8_cast_fc1_grad", tokens * mlp_in);
    add(&ops, linear("fc1_dgrad", tokens, d.h, mlp_in));
    add(&ops, input_grad("tp_ar_mlp_bwd", "tp_rs_mlp_bwd"));
    add(&ops, linear("fc1_wgrad", d.h, mlp_in, tokens));
  }
  Op ln2_bwd = memory("ln2_bwd", 4 * local * e);
  ln2_bwd.graph_module = moe ? kGraphMoeRouter : kGraphMlp;
  add(&ops, ln2_bwd);
  tag_graph_module(&ops, 0, moe ? kGraphMoe : kGraphMlp);
  const size_t attn_from = ops.size();
  if (d.hidden_dropout) add(&ops, memory("dropout_residual1_bwd", local * (2 * e + 1)));
  if (sp) add(&ops, ub(tp_collective("tp_ag_attn_bwd", CollectiveOp::kAllGather, bsh * e), kRing));
  add_cast(&ops, d, "fp8_cast_proj_grad", bsh);
  add(&ops, linear("attn_proj_dgrad", tokens, d.q_dim / d.t, d.h));
  add(&ops, linear("attn_proj_wgrad", d.q_dim / d.t, d.h, tokens));
  if (d.attention == AttentionBackend::kUnfused) {
    add(&ops, score_gemm("attn_values_bwd_probs", d.s, d.s, hd, d.b * heads, d));
    add(&ops, score_gemm("attn_values_bwd_values", d.s, hd, d.s, d.b * heads, d));
    if (d.attention_dropout) add(&ops, memory("attn_dropout_bwd", score_elems * (2 * e + 1)));
    add(&ops, memory("softmax_bwd", 3 * score_elems * e));
    add(&ops, score_gemm("attn_scores_bwd_q", d.s, hd, d.s, d.b * heads, d));
    add(&ops, score_gemm("attn_scores_bwd_k", d.s, hd, d.s, d.b * heads, d));
  } else if (d.cp > 1) {
    for (Op& op : cp_attention_ops(d, true)) add(&ops, std::move(op));
  } else {
    add(&ops, attention_op("attention_bwd", d, true));
  }
  if (d.mla) {
    add_mla_backward(d, &ops);
    add(&ops, input_grad("tp_ar_attn_bwd", "tp_rs_attn_bwd"));
    add(&ops, linear("q_kv_down_wgrad", d.h, d.q_lora + d.kv_lora + d.qk_rope, tokens));
  } else {
    if (d.rope) add(&ops, memory("rope_bwd", 2 * tokens * (d.hd * (d.a + d.g)) / d.t * e));
    if (d.qk_norm) add(&ops, memory("qk_norm_bwd", 4 * tokens * (d.hd * (d.a + d.g)) / d.t * e));
    add_cast(&ops, d, "fp8_cast_qkv_grad", tokens * qkv_out);
    add(&ops, linear("qkv_dgrad", tokens, d.h, qkv_out));
    add(&ops, input_grad("tp_ar_attn_bwd", "tp_rs_attn_bwd"));
    add(&ops, linear("qkv_wgrad", d.h, qkv_out, tokens));
  }
  add(&ops, memory("ln1_bwd", 4 * local * e));
  tag_graph_module(&ops, attn_from, kGraphAttn);
  return ops;
}

// Vocab-parallel embedding: each rank looks up its slice of the vocabulary, then the partial
// embeddings are summed (all-reduce, or reduce-scatter into sequence-parallel shards).
std::vector<Op> embedding_forward_ops(const LayerDims& d) {
  const double bsh = d.b * d.s * d.h, e = d.elem;
  const double local = d.sequence_parallel ? bsh / d.t : bsh;
  std::vector<Op> ops;
  add(&ops, memory("embedding_lookup", 3 * bsh * e));
  add(&ops, d.sequence_parallel
                ? tp_collective("tp_rs_embedding", CollectiveOp::kReduceScatter, bsh * e)
                : all_reduce("tp_ar_embedding", bsh * e));
  if (d.hidden_dropout) add(&ops, memory("embedding_dropout", local * (2 * e + 1)));
  return ops;
}

std::vector<Op> embedding_backward_ops(const LayerDims& d) {
  const double bsh = d.b * d.s * d.h, e = d.elem;
  const double local = d.sequence_parallel ? bsh / d.t : bsh;
  std::vector<Op> ops;
  if (d.hidden_dropout) add(&ops, memory("embedding_dropout_bwd", local * (2 * e + 1)));
  if (d.sequence_parallel) {
    add(&ops, tp_collective("tp_ag_embedding_bwd", CollectiveOp::kAllGather, bsh * e));
  }
  add(&ops, memory("embedding_grad_scatter", 3 * bsh * e));
  return ops;
}

// Vocab-parallel logits and cross-entropy: two small fp32 all-reduces (row max, sum of exp).
std::vector<Op> output_forward_ops(const LayerDims& d) {
  const double tokens = d.b * d.s, e = d.elem, bsh = tokens * d.h;
  const double logits = tokens * d.v / d.t;
  const double local = d.sequence_parallel ? bsh / d.t : bsh;
  std::vector<Op> ops;
  add(&ops, memory("final_ln", 2 * local * e));
  if (d.sequence_parallel) {
    add(&ops, tp_collective("tp_ag_output", CollectiveOp::kAllGather, bsh * e));
  }
  add(&ops, gemm("logits", tokens, d.v / d.t, d.h));
  add(&ops, memory("cross_entropy_max", logits * e));
  add(&ops, all_reduce("tp_ar_ce_max", tokens * 4));
  add(&ops, memory("cross_entropy_sum", logits * (e + 4)));
  add(&ops, all_reduce("tp_ar_ce_sum", tokens * 4));
  return ops;
}

std::vector<Op> output_backward_ops(const LayerDims& d) {
  const double tokens = d.b * d.s, e = d.elem, bsh = tokens * d.h;
  const double logits = tokens * d.v / d.t;
  const double local = d.sequence_parallel ? bsh / d.t : bsh;
  std::vector<Op> ops;
  add(&ops, memory("cross_entropy_bwd", logits * (4 + e)));
  add(&ops, gemm("logits_dgrad", tokens, d.h, d.v / d.t));
  add(&ops, d.sequence_parallel
                ? tp_collective("tp_rs_logits_bwd", CollectiveOp::kReduceScatter, bsh * e, true)
                : all_reduce("tp_ar_logits_bwd", bsh * e, true));
  add(&ops, gemm("logits_wgrad", d.v / d.t, d.h, tokens));
  add(&ops, memory("final_ln_bwd", 4 * local * e));
  return ops;
}

double gemm_flops(const std::vector<Op>& ops) {
  double total = 0;
  for (const Op& op : ops) total += op.model_flops();
  return total;
}

double executed_flops(const std::vector<Op>& ops) {
  double total = 0;
  for (const Op& op : ops) total += op.flops();
  return total;
}

}  // namespace trident
