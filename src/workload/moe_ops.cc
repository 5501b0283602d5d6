#include "workload/moe_ops.h"

#include <algorithm>
#include <cmath>

#include "workload/stage_work.h"

namespace trident {
namespace {

Op gemm_op(const char* name, double m, double n, double k, double batch = 1) {
  Op op;
  op.name = name;
  op.kind = OpKind::kGemm;
  op.gemm = GemmShape{m, n, k, batch};
  op.linear = true;
  op.grouped = batch > 1;
  return op;
}

Op memory_op(const char* name, double bytes) {
  Op op;
  op.name = name;
  op.kind = OpKind::kMemory;
  op.bytes = bytes;
  return op;
}

Op collective_op(const char* name, OpKind kind, CollectiveOp c, double bytes) {
  Op op;
  op.name = name;
  op.kind = kind;
  op.collective = c;
  op.bytes = bytes;
  return op;
}

// A grouped GEMM of the experts, at the busiest rank's load (model FLOPs at the mean); without
// moe_grouped_gemm, one GEMM per local expert in turn (experts.py SequentialMLP).
Op expert_gemm(const LayerDims& d, const char* name, double m, double n, double k, double batch) {
  Op op = gemm_op(name, m, n, k, batch);
  op.grouped = d.grouped_gemm;
  op.sequential = !d.grouped_gemm;
  // Transformer Engine's GroupedLinear issues one cuBLAS GEMM per local expert, spread over
  // its math streams (te_general_grouped_gemm, transformer_engine/pytorch/csrc/extensions/
  // gemm.cpp), after a Python loop over them (module/grouped_linear.py); SequentialMLP runs
  // one expert module after another.
  op.launches = std::max(1, static_cast<int>(std::lround(batch)));
  op.model_flops_scale = 1 / d.expert_load;
  return op;
}

// Sizes of one MoE MLP on one TP rank.
struct MoeSizes {
  double tokens, routed, m, local_experts, gated, e;
};

MoeSizes sizes(const LayerDims& d) {
  MoeSizes z;
  z.tokens = d.b * d.s;
  z.routed = z.tokens * d.topk;
  z.local_experts = d.experts / d.ep;
  // Each rank dispatches the routed copies of its T / t sequence-parallel tokens; an expert's
  // rank receives them from its EP group, then all-gathers them over its ETP group.
  z.m = d.ep * d.etp / d.t * z.routed / d.experts * d.expert_load;
  z.gated = d.swiglu ? 2 : 1;
  z.e = d.elem;
  return z;
}

// The dispatch (or, `combine`, the combine) collectives over EP and then TP.
void add_dispatch(const LayerDims& d, const MoeSizes& z, bool combine, std::vector<Op>* ops,
                  int overlap_ops) {
  const double h = d.h, e = z.e;
  if (d.ep > 1) {
    // flex: each rank's T / t tokens, once per destination GPU and node (lowering/flex_dispatch.h).
    Op op =
        d.flex
            ? collective_op(combine ? "ep_flex_combine" : "ep_flex_dispatch", OpKind::kEpCollective,
                            CollectiveOp::kAllToAll, z.tokens / d.t * h * e)
        : d.alltoall
            ? collective_op(combine ? "ep_a2a_combine" : "ep_a2a_dispatch", OpKind::kEpCollective,
                            CollectiveOp::kAllToAll, z.routed / d.t * h * e)
            : collective_op(combine ? "ep_rs_combine" : "ep_ag_dispatch", OpKind::kEpCollective,
                            combine ? CollectiveOp::kReduceScatter : CollectiveOp::kAllGather,
                            d.ep * z.tokens * h * e);
    op.combine = combine;
    op.overlaps_next = overlap_ops > 0;
    op.overlap_ops = std::max(1, overlap_ops);
    ops->push_back(op);
  }
  (void)combine;
}

// The expert-TP collective of the routed copies (alltoall dispatcher with ETP > 1; ETP = t, so
// over the TP group): an all-gather after the dispatch, a reduce-scatter before the combine
// (MoEAlltoAllTokenDispatcher's gather_from_sequence_parallel_region over the expert TP group).
// Its buffer: the ETP ranks' received copies, ETP T k L h / t.
void add_tp_routed(const LayerDims& d, const MoeSizes& z, CollectiveOp c, const char* name,
                   std::vector<Op>* ops) {
  // flex with ETP = t: its TP x EP group sends each token to the ETP ranks of each destination,
  // modelled as the EP dispatch and this gather of what arrived.
  if ((!d.alltoall && !d.flex) || d.etp <= 1) return;
  ops->push_back(collective_op(name, OpKind::kTpCollective, c,
                               d.etp / d.t * z.routed * d.expert_load * d.h * z.e));
}

void add_shared_forward(const LayerDims& d, const MoeSizes& z, std::vector<Op>* ops) {
  if (d.f_shared <= 0) return;
  ops->push_back(gemm_op("shared_fc1", z.tokens, z.gated * d.f_shared / d.t, d.h));
  ops->push_back(memory_op("shared_act", (z.gated + 1) * z.tokens * d.f_shared / d.t * z.e));
  ops->push_back(gemm_op("shared_fc2", z.tokens, d.h, d.f_shared / d.t));
}

void add_shared_backward(const LayerDims& d, const MoeSizes& z, std::vector<Op>* ops) {
  if (d.f_shared <= 0) return;
  const double f = d.f_shared / d.t;
  ops->push_back(gemm_op("shared_fc2_dgrad", z.tokens, f, d.h));
  ops->push_back(gemm_op("shared_fc2_wgrad", f, d.h, z.tokens));
  ops->push_back(memory_op("shared_act_bwd", (2 * z.gated + 1) * z.tokens * f * z.e));
  ops->push_back(gemm_op("shared_fc1_dgrad", z.tokens, d.h, z.gated * f));
  ops->push_back(gemm_op("shared_fc1_wgrad", d.h, z.gated * f, z.tokens));
}

int shared_ops(const LayerDims& d, bool backward) {
  if (d.f_shared <= 0 || !d.shared_overlap || d.ep <= 1) return 0;
  return backward ? 5 : 3;
}

}  // namespace

double moe_busiest_expert_load(const PlanSpec& p) {
  if (p.moe_capacity_factor > 0) {
    return p.moe_pad_to_capacity ? p.moe_capacity_factor
                                 : std::min(p.moe_load_imbalance, p.moe_capacity_factor);
  }
  return p.moe_load_imbalance;
}

double moe_expert_load(const ModelSpec& m, const PlanSpec& p) {
  if (!m.moe()) return 1;
  const double busiest = moe_busiest_expert_load(p);
  if (p.moe_pad_to_capacity && p.moe_capacity_factor > 0) return busiest;
  const double experts = m.num_experts, n = experts / p.expert_parallel;
  if (experts <= 1) return 1;
  const double rest = std::max(0.0, (experts - busiest) / (experts - 1));
  return (busiest + (n - 1) * rest) / n;
}

double moe_tokens_per_expert(const ModelSpec& m, const PlanSpec& p) {
  if (!m.moe()) return 0;
  return double(p.expert_parallel) * p.expert_tensor() / p.tensor * p.micro_batch_size *
         m.seq_length / p.context * m.moe_router_topk / m.num_experts;
}

double moe_activation_delta_bytes(const ModelSpec& m, const PlanSpec& p) {
  if (!m.moe() || p.recompute == Recompute::kFull) return 0;
  const double T = double(p.micro_batch_size) * m.seq_length / p.context, h = m.hidden_size;
  const double t = p.tensor, etp = p.expert_tensor();
  const double k = m.moe_router_topk, load = moe_expert_load(m, p), g = m.swiglu ? 2 : 1;
  // The experts' GEMMs (TE GroupedLinear) save their inputs as the GEMM read them: FP8 with the
  // recipe's scales under fp8 (TE keeps the quantized input's column-wise data), 16
  // bits otherwise (module/grouped_linear.py:540-560 at d0067d0); the activation function saves
  // the FC1 output in 16 bits.
  const bool fp8 = p.precision == Precision::kFp8;
  const double scale = fp8 ? fp8_scale_bytes_per_element(p.fp8_recipe) : 0;
  const double in = fp8 ? 1 + scale : 2;
  const double f = double(m.moe_ffn_hidden_size) / etp, fs = m.moe_shared_expert_intermediate_size;
  // The experts' input on a rank: its ETP group's copies, ETP T k L / t tokens.
  const double routed = etp / t * T * k * load * (h * in + g * f * 2 + f * in);
  const double shared = T * (g * fs * 2 + fs * in) / t;
  // The router GEMM runs in BF16 and saves the 16-bit norm output where the dense layer's FC1
  // kept its FP8 cast.
  const double router = fp8 ? (1 - scale) * T * h / (p.sequence_parallel ? t : 1) : 0;
  return routed + shared + router + 4 * T * k - dense_mlp_activation_bytes(m, p);
}

double moe_dispatch_buffer_bytes(const ModelSpec& m, const PlanSpec& p) {
  if (!m.moe() || p.expert_parallel <= 1) return 0;
  const double T = double(p.micro_batch_size) * m.seq_length / p.context;
  return 2 * T * m.moe_router_topk * moe_expert_load(m, p) * m.hidden_size / p.tensor * 2;
}

void add_moe_mlp_forward(const LayerDims& d, std::vector<Op>* ops) {
  const MoeSizes z = sizes(d);
  const double h = d.h, e = z.e, f = d.f_moe / d.etp;
  // --cuda-graph-scope moe_router: the router (and a shared expert not overlapped);
  // moe_preprocess: MoELayer.preprocess, the permutation (transformer_layer.py:1235-1261).
  const size_t from = ops->size();
  Op router = gemm_op("router", z.tokens, d.experts, h);
  router.linear = false;  // Megatron-Core keeps the router out of FP8
  ops->push_back(router);
  ops->push_back(memory_op("router_topk", 2 * z.tokens * d.experts * 4));
  tag_graph_module(ops, from, kGraphMoeRouter);
  ops->push_back(memory_op("permute", 2 * z.routed / d.t * h * e));
  tag_graph_module(ops, from, kGraphMoePreprocess);
  const int overlap = shared_ops(d, false);
  const size_t dispatch_at = ops->size();
  add_dispatch(d, z, false, ops, overlap);
  // The host waits for the token counts before the dispatch (or, without one, before the
  // experts): PlanSpec::moe_dispatch_syncs.
  const bool dispatched = ops->size() > dispatch_at;
  if (dispatched) (*ops)[dispatch_at].host_sync = d.dispatch_sync;
  if (overlap > 0) add_shared_forward(d, z, ops);
  add_tp_routed(d, z, CollectiveOp::kAllGather, "tp_ag_experts", ops);
  ops->push_back(expert_gemm(d, "experts_fc1", z.m, z.gated * f, h, z.local_experts));
  if (!dispatched) ops->back().host_sync = d.dispatch_sync;
  ops->push_back(memory_op(d.swiglu ? "experts_swiglu" : "experts_gelu",
                           (z.gated + 1) * z.m * z.local_experts * f * e));
  ops->push_back(expert_gemm(d, "experts_fc2", z.m, h, f, z.local_experts));
  add_tp_routed(d, z, CollectiveOp::kReduceScatter, "tp_rs_experts", ops);
  add_dispatch(d, z, true, ops, 0);
  ops->push_back(memory_op("unpermute", 2 * z.routed / d.t * h * e));
  tag_graph_module(ops, from, kGraphMoe);
  const size_t shared_from = ops->size();
  if (overlap == 0) add_shared_forward(d, z, ops);
  tag_graph_module(ops, shared_from, kGraphMoeRouter);
}

void add_moe_mlp_backward(const LayerDims& d, std::vector<Op>* ops) {
  const MoeSizes z = sizes(d);
  const double h = d.h, e = z.e, f = d.f_moe / d.etp;
  const int overlap = shared_ops(d, true);
  const size_t from = ops->size();
  if (overlap == 0) add_shared_backward(d, z, ops);
  tag_graph_module(ops, from, kGraphMoeRouter);
  ops->push_back(memory_op("unpermute_bwd", 2 * z.routed / d.t * h * e));
  // The gradients travel to the experts as the tokens did: the busiest rank receives most.
  add_dispatch(d, z, false, ops, overlap);
  if (overlap > 0) add_shared_backward(d, z, ops);
  add_tp_routed(d, z, CollectiveOp::kAllGather, "tp_ag_experts_bwd", ops);
  ops->push_back(expert_gemm(d, "experts_fc2_dgrad", z.m, f, h, z.local_experts));
  ops->push_back(expert_gemm(d, "experts_fc2_wgrad", f, h, z.m, z.local_experts));
  ops->push_back(memory_op(d.swiglu ? "experts_swiglu_bwd" : "experts_gelu_bwd",
                           (2 * z.gated + 1) * z.m * z.local_experts * f * e));
  ops->push_back(expert_gemm(d, "experts_fc1_dgrad", z.m, h, z.gated * f, z.local_experts));
  ops->push_back(expert_gemm(d, "experts_fc1_wgrad", h, z.gated * f, z.m, z.local_experts));
  add_tp_routed(d, z, CollectiveOp::kReduceScatter, "tp_rs_experts_bwd", ops);
  add_dispatch(d, z, true, ops, 0);
  tag_graph_module(ops, from, kGraphMoe);
  ops->push_back(memory_op("permute_bwd", 2 * z.routed / d.t * h * e));
  tag_graph_module(ops, from, kGraphMoePreprocess);
  ops->push_back(memory_op("router_topk_bwd", 3 * z.tokens * d.experts * 4));
  Op router = gemm_op("router_dgrad", z.tokens, h, d.experts);
  router.linear = false;
  ops->push_back(router);
  tag_graph_module(ops, from, kGraphMoeRouter);
}

// Down-projections (h -> q_lora, h -> kv_lora + rope) are replicated over TP; the
// up-projections split by heads (Megatron-Core MLASelfAttention).
void add_mla_forward(const LayerDims& d, std::vector<Op>* ops) {
  const double T = d.b * d.s, e = d.elem, heads = d.a / d.t;
  if (d.q_lora > 0) {
    ops->push_back(gemm_op("q_down", T, d.q_lora, d.h));
    ops->push_back(memory_op("q_norm", 2 * T * d.q_lora * e));
    ops->push_back(gemm_op("q_up", T, heads * (d.qk + d.qk_rope), d.q_lora));
  } else {
    ops->push_back(gemm_op("q_proj", T, heads * (d.qk + d.qk_rope), d.h));
  }
  ops->push_back(gemm_op("kv_down", T, d.kv_lora + d.qk_rope, d.h));
  ops->push_back(memory_op("kv_norm", 2 * T * d.kv_lora * e));
  ops->push_back(gemm_op("kv_up", T, heads * (d.qk + d.v_dim), d.kv_lora));
  ops->push_back(memory_op("rope", 2 * T * (heads + 1) * d.qk_rope * e));
}

void add_mla_backward(const LayerDims& d, std::vector<Op>* ops) {
  const double T = d.b * d.s, e = d.elem, heads = d.a / d.t;
  const double kv_up = heads * (d.qk + d.v_dim), q_up = heads * (d.qk + d.qk_rope);
  ops->push_back(memory_op("rope_bwd", 2 * T * (heads + 1) * d.qk_rope * e));
  ops->push_back(gemm_op("kv_up_dgrad", T, d.kv_lora, kv_up));
  ops->push_back(gemm_op("kv_up_wgrad", d.kv_lora, kv_up, T));
  ops->push_back(memory_op("kv_norm_bwd", 4 * T * d.kv_lora * e));
  if (d.q_lora > 0) {
    ops->push_back(gemm_op("q_up_dgrad", T, d.q_lora, q_up));
    ops->push_back(gemm_op("q_up_wgrad", d.q_lora, q_up, T));
    ops->push_back(memory_op("q_norm_bwd", 4 * T * d.q_lora * e));
    ops->push_back(gemm_op("q_kv_down_dgrad", T, d.h, d.q_lora + d.kv_lora + d.qk_rope));
  } else {
    ops->push_back(gemm_op("q_proj_dgrad", T, d.h, q_up));
    ops->push_back(gemm_op("q_proj_wgrad", d.h, q_up, T));
    ops->push_back(gemm_op("kv_down_dgrad", T, d.h, d.kv_lora + d.qk_rope));
  }
}

int moe_all_to_all_sms(const PlanSpec& plan) {
  if (plan.moe_dispatcher != MoeDispatcher::kFlex) return 0;
  return plan.moe_flex_backend == MoeFlexBackend::kDeepEp ? 20 : 16;
}

double moe_all_to_all_compute_stretch(const PlanSpec& plan, int sms) {
  const int held = moe_all_to_all_sms(plan);
  return held > 0 && sms > held ? double(sms) / (sms - held) : 1.0;
}

}  // namespace trident
