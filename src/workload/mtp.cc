#include "workload/mtp.h"

#include <string>
#include <utility>

#include "workload/moe_model.h"
#include "workload/nvfp4.h"

namespace trident {
namespace {

Op kernel(const char* name, OpKind kind) {
  Op op;
  op.name = name;
  op.kind = kind;
  return op;
}

Op linear(const char* name, double m, double n, double k) {
  Op op = kernel(name, OpKind::kGemm);
  op.gemm = GemmShape{m, n, k, 1};
  op.linear = true;
  return op;
}

Op memory(const char* name, double bytes) {
  Op op = kernel(name, OpKind::kMemory);
  op.bytes = bytes;
  return op;
}

Op tp(const char* name, CollectiveOp coll, double bytes, bool overlaps_next = false) {
  Op op = kernel(name, OpKind::kTpCollective);
  op.collective = coll;
  op.bytes = bytes;
  op.overlaps_next = overlaps_next;
  return op;
}

// eh_proj runs inside the FP8 / FP4 context (MultiTokenPredictionLayer.
// _proj_and_transformer_layer enters get_fp8_context around _concat_embeddings): its input
// (forward) or output gradient (backward) is cast first, as layer_ops.cc casts each linear's.
void add_cast(std::vector<Op>* ops, const LayerDims& d, const char* name, double elems) {
  if (d.fp8) ops->push_back(memory(name, elems * d.fp8_cast_bytes));
  if (d.fp4) ops->push_back(memory(name, elems * Nvfp4QuantizeBytes{}.total()));
}

}  // namespace

bool mtp_layer_is_moe(const ModelSpec& m) { return m.is_moe_layer(m.num_layers - 1); }

double mtp_depth_params(const ModelSpec& m) {
  const double h = m.hidden_size;
  const double norm = m.rms_norm ? h : 2 * h;  // enorm, hnorm, final_layernorm
  return 3 * norm + 2 * h * h + layer_params_at(m, m.num_layers - 1);
}

double mtp_params(const ModelSpec& m) { return m.mtp_num_layers * mtp_depth_params(m); }

double mtp_active_params(const ModelSpec& m) {
  const double inactive =
      mtp_layer_is_moe(m) ? (m.num_experts - m.moe_router_topk) * routed_expert_params(m) : 0;
  return m.mtp_num_layers * (mtp_depth_params(m) - inactive);
}

double mtp_megatron_flops(const ModelSpec& m, double batch_size) {
  if (m.mtp_num_layers <= 0) return 0;
  // num_floating_point_operations counts each depth as one more layer of the last layer's
  // kind; the formula is linear in the layer counts, so a one-layer model without logits
  // gives that layer's term.
  ModelSpec one = m;
  one.num_layers = 1;
  one.moe_layer_pattern.clear();
  if (m.moe()) one.moe_layer_pattern.push_back(mtp_layer_is_moe(m) ? 1 : 0);
  one.vocab_size = 0;
  const double layer = megatron_model_flops(one, 1);
  const double h = m.hidden_size, tokens = double(m.seq_length);
  // "MTP norms and proj" (3h + 2h^2) and "MTP + final logit" (h V per depth), 3 x 2 each.
  const double head = 3 * 2 * (3 * h + 2 * h * h) + 3 * 2 * h * double(m.vocab_size);
  return batch_size * m.mtp_num_layers * (layer + tokens * head);
}

int mtp_virtual_stage(const ModelSpec& m, const PlanSpec& p) {
  if (m.mtp_num_layers <= 0) return -1;
  const int stages = p.pipeline * p.virtual_stages;
  return p.mtp_virtual_stage >= 0 && p.mtp_virtual_stage < stages ? p.mtp_virtual_stage
                                                                  : stages - 1;
}

std::vector<Op> mtp_head_forward_ops(const LayerDims& d, bool embedding) {
  const double tokens = d.b * d.s, e = d.elem, bsh = tokens * d.h;
  const bool sp = d.sequence_parallel;
  const double local = sp ? bsh / d.t : bsh;
  std::vector<Op> ops;
  if (embedding) ops = embedding_forward_ops(d);
  ops.push_back(memory("mtp_enorm", 2 * local * e));
  ops.push_back(memory("mtp_hnorm", 2 * local * e));
  ops.push_back(memory("mtp_concat", 4 * local * e));  // both halves read, 2h written
  if (sp) ops.push_back(tp("tp_ag_mtp_eh_proj", CollectiveOp::kAllGather, 2 * bsh * e));
  add_cast(&ops, d, "fp8_cast_mtp_eh_proj", 2 * bsh);
  ops.push_back(linear("mtp_eh_proj", tokens, d.h / d.t, 2 * d.h));
  ops.push_back(tp("tp_ag_mtp_eh_proj_out", CollectiveOp::kAllGather, bsh * e));
  return ops;
}

std::vector<Op> mtp_head_backward_ops(const LayerDims& d) {
  const double tokens = d.b * d.s, e = d.elem, bsh = tokens * d.h;
  const bool sp = d.sequence_parallel;
  const double local = sp ? bsh / d.t : bsh;
  std::vector<Op> ops;
  // scatter_to_sequence_parallel_region's backward gathers; the output gather's backward is a
  // split (no collective).
  if (sp) ops.push_back(tp("tp_ag_mtp_eh_proj_bwd", CollectiveOp::kAllGather, bsh * e));
  add_cast(&ops, d, "fp8_cast_mtp_eh_proj_grad", tokens * d.h / d.t);
  ops.push_back(linear("mtp_eh_proj_dgrad", tokens, 2 * d.h, d.h / d.t));
  ops.push_back(sp ? tp("tp_rs_mtp_eh_proj_bwd", CollectiveOp::kReduceScatter, 2 * bsh * e, true)
                   : tp("tp_ar_mtp_eh_proj_bwd", CollectiveOp::kAllReduce, 2 * bsh * e, true));
  ops.push_back(linear("mtp_eh_proj_wgrad", d.h / d.t, 2 * d.h, tokens));
  ops.push_back(memory("mtp_enorm_bwd", 4 * local * e));
  ops.push_back(memory("mtp_hnorm_bwd", 4 * local * e));
  for (Op& op : embedding_backward_ops(d)) ops.push_back(std::move(op));
  return ops;
}

double mtp_depth_activation_bytes(const ModelSpec& m, const PlanSpec& p, double layer_bytes,
                                  double linear_input_bytes) {
  const double tokens = double(p.micro_batch_size) * m.seq_length / p.context;
  const double sbh = tokens * m.hidden_size, t = p.tensor;
  const double local = p.sequence_parallel ? sbh / t : sbh;
  const double logits = tokens * double(m.vocab_size) / t * 4;  // fp32 softmax, as the loss's
  if (p.recompute == Recompute::kFull) return 2 * local * 2 + logits;
  // enorm and hnorm inputs (2 B each), eh_proj's input (2h wide), the final norm's input.
  const double head = local * (2 + 2 + 2 * linear_input_bytes + 2);
  return layer_bytes + head + logits;
}

}  // namespace trident
