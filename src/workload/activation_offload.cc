#include "workload/activation_offload.h"

#include <algorithm>

#include "workload/moe_ops.h"

namespace trident {

double offloaded_activation_bytes(const ModelSpec& m, const PlanSpec& p) {
  if (!m.moe() || p.activation_offload == 0 || p.recompute == Recompute::kFull ||
      p.recomputes(kRecomputeMoe)) {
    return 0;
  }
  const double T = double(p.micro_batch_size) * m.seq_length / p.context, h = m.hidden_size;
  const double etp = p.expert_tensor(), k = m.moe_router_topk, g = m.swiglu ? 2 : 1;
  const double copies = etp / p.tensor * T * k * moe_expert_load(m, p);
  const bool fp8 = p.precision == Precision::kFp8;
  const double in = fp8 ? 1 + fp8_scale_bytes_per_element(p.fp8_recipe) : 2;
  double bytes = 0;
  if (p.activation_offload & kOffloadExpertFc1) bytes += copies * h * in;
  if (p.activation_offload & kOffloadMoeAct) {
    bytes += copies * g * double(m.moe_ffn_hidden_size) / etp * 2;
  }
  return bytes;
}

double offload_wait_s(double bytes, double bandwidth, double compute_s) {
  if (bytes <= 0 || bandwidth <= 0) return 0;
  return std::max(0.0, bytes / bandwidth - compute_s);
}

Op offload_wait_op(const char* name, double seconds) {
  Op op;
  op.name = name;
  op.kind = OpKind::kMemory;
  op.fixed_s = seconds;
  return op;
}

}  // namespace trident
