#include "workload/recompute_modules.h"

#include <initializer_list>
#include <string>

#include "workload/moe_ops.h"
#include "workload/stage_work.h"

namespace trident {
namespace {

bool named(const Op& op, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (op.name == n) return true;
  }
  return false;
}

// The ops of [first, last] in `forward` (by name; empty when either is missing).
std::vector<bool> span(const std::vector<Op>& forward, std::initializer_list<const char*> first,
                       std::initializer_list<const char*> last) {
  std::vector<bool> in(forward.size(), false);
  size_t begin = forward.size(), end = forward.size();
  for (size_t i = 0; i < forward.size(); ++i) {
    if (begin == forward.size() && named(forward[i], first)) begin = i;
    if (begin != forward.size() && named(forward[i], last)) end = i;
  }
  if (begin == forward.size() || end == forward.size()) return in;
  for (size_t i = begin; i <= end; ++i) in[i] = true;
  return in;
}

}  // namespace

bool is_attention_core(const Op& op) {
  return op.name == "attn_scores" || op.name == "softmax" || op.name == "attn_dropout" ||
         op.name == "attn_values" || op.name == "attention" || op.kind == OpKind::kCpTransfer ||
         op.cp_ring || op.name.rfind("cp_", 0) == 0;
}

std::vector<Op> module_recompute_ops(const std::vector<Op>& forward, const PlanSpec& plan,
                                     bool moe) {
  if (plan.recompute != Recompute::kSelective) return {};
  const bool sp = plan.sequence_parallel;
  // The MLP submodule as Megatron-Core checkpoints it: under sequence parallelism its TP
  // all-gather (in fc1's LayerNormLinear, or the MoE dispatcher's) and its reduce-scatter too.
  std::vector<bool> mlp(forward.size(), false);
  if (moe && plan.recomputes(kRecomputeMoe)) {
    mlp = span(forward, {sp ? "tp_ag_mlp" : "router"}, {"tp_rs_mlp", "tp_ar_mlp"});
  } else if (!moe && plan.recomputes(kRecomputeMlp)) {
    mlp = span(forward, {"ln2"}, {"tp_rs_mlp", "tp_ar_mlp"});
  }
  std::vector<Op> out;
  for (size_t i = 0; i < forward.size(); ++i) {
    const Op& op = forward[i];
    const bool rerun =
        mlp[i] || (plan.recomputes(kRecomputeCoreAttn) && is_attention_core(op)) ||
        (moe && plan.recomputes(kRecomputeLayernorm) && op.name == "ln2") ||
        (plan.recomputes(kRecomputeMlaUpProj) && named(op, {"q_up", "q_proj", "kv_up", "rope"})) ||
        (moe && plan.recomputes(kRecomputeMoeAct) &&
         named(op, {"experts_swiglu", "experts_gelu"})) ||
        (moe && plan.recomputes(kRecomputeSharedExperts) &&
         named(op, {"shared_fc1", "shared_act", "shared_fc2"}));
    if (rerun) out.push_back(op);
  }
  return out;
}

double recompute_module_savings(const ModelSpec& m, const PlanSpec& p, bool moe) {
  if (p.recompute != Recompute::kSelective) return 0;
  const double T = double(p.micro_batch_size) * m.seq_length / p.context, h = m.hidden_size;
  const double t = p.tensor, sbh = T * h;
  double saved = 0;
  if (moe && p.recomputes(kRecomputeLayernorm)) {
    // The pre-MLP norm's 16-bit output, on the rank's sequence-parallel share.
    saved += 2 * (p.sequence_parallel ? sbh / t : sbh);
  }
  if (p.recomputes(kRecomputeMlaUpProj) && m.multi_latent_attention) {
    // Q, K and V as layer_activation_bytes counts them: (2 + 4 g / a) s b h / t.
    saved += (2 + 4.0 * m.num_query_groups / m.num_attention_heads) * sbh / t;
  }
  if (!moe) {
    if (p.recomputes(kRecomputeMlp)) saved += dense_mlp_activation_bytes(m, p);
    return saved;
  }
  if (p.recomputes(kRecomputeMoe)) {
    return saved + moe_activation_delta_bytes(m, p) + dense_mlp_activation_bytes(m, p);
  }
  // Each 16-bit or FP8-cast element as moe_activation_delta_bytes counts it.
  const bool fp8 = p.precision == Precision::kFp8;
  const double in = fp8 ? 1 + fp8_scale_bytes_per_element(p.fp8_recipe) : 2;
  const double g = m.swiglu ? 2 : 1, k = m.moe_router_topk, etp = p.expert_tensor();
  if (p.recomputes(kRecomputeMoeAct)) {
    // The activation's output, the experts' FC2 input: f_moe / ETP per routed copy of the
    // ETP group's ETP T k L / t.
    const double f = double(m.moe_ffn_hidden_size) / etp;
    saved += etp / t * T * k * moe_expert_load(m, p) * f * in;
  }
  if (p.recomputes(kRecomputeSharedExperts)) {
    const double fs = double(m.moe_shared_expert_intermediate_size);
    saved += T * (g * fs * 2 + fs * in) / t;
  }
  return saved;
}

}  // namespace trident
