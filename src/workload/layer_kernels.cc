#include "workload/layer_kernels.h"

#include "workload/activation_offload.h"
#include "workload/eager_ops.h"
#include "workload/local_attention.h"
#include "workload/moe_ops.h"
#include "workload/recompute_modules.h"
#include "workload/stage_work.h"

namespace trident {

namespace {

// The layer dimensions of `layer` (its window, chunk and RoPE: local_attention.h), or of the
// model's plain layer when layer < 0.
LayerDims dims_of_layer(const ModelSpec& model, const PlanSpec& plan, GpuArchitecture arch,
                        int layer) {
  LayerDims d = make_layer_dims(model, plan, arch);
  if (layer >= 0) apply_layer_attention(model, layer, &d);
  return d;
}

}  // namespace

std::vector<Op> stack_kernels(std::vector<Op> ops, const LayerDims& dims, const ModelSpec& model,
                              const PlanSpec& plan) {
  if (plan.stack.elementwise != ElementwiseKernels::kEager) return ops;
  return eager_ops(ops, dims, model.rms_norm);
}

LayerKernels::LayerKernels(const ComputeModel& compute, const ModelSpec& model,
                           const PlanSpec& plan, GpuArchitecture arch, const HostSpec& host,
                           int layer)
    : dims(dims_of_layer(model, plan, arch, layer)),
      tm(make_timing(compute, plan, dims)),
      fwd(stack_kernels(layer_forward_ops(dims), dims, model, plan)),
      bwd(stack_kernels(layer_backward_ops(dims), dims, model, plan)),
      moe_fwd(model.moe() ? stack_kernels(layer_forward_ops(dims, true), dims, model, plan)
                          : std::vector<Op>()),
      moe_bwd(model.moe() ? stack_kernels(layer_backward_ops(dims, true), dims, model, plan)
                          : std::vector<Op>()),
      act(layer_activation_bytes(model, plan, arch)),
      act_moe(act + moe_activation_delta_bytes(model, plan)) {
  tm.arch = arch;
  if (plan.recompute == Recompute::kFull) recompute = fwd;
  // Selective: torchtitan's op policy, or Megatron-Core's recompute_modules (core_attn by
  // default: the attention core).
  const bool alternate = plan.recompute == Recompute::kSelective &&
                         plan.stack.selective_recompute == SelectiveRecompute::kAlternateMatmuls;
  if (plan.recompute == Recompute::kSelective) {
    recompute =
        alternate ? alternate_matmul_recompute(fwd, dims) : module_recompute_ops(fwd, plan, false);
  }
  moe_recompute = plan.recompute == Recompute::kFull ? moe_fwd
                  : alternate                        ? recompute
                                                     : module_recompute_ops(moe_fwd, plan, true);
  if (!alternate) {
    act -= recompute_module_savings(model, plan, false);
    act_moe -= recompute_module_savings(model, plan, true);
  }
  // Activation offloading: the MoE layer's offloaded inputs leave the GPU; each pass waits
  // for its copy beyond its own kernels (D2H after the forward, H2D before the backward).
  const double offloaded = offloaded_activation_bytes(model, plan);
  if (offloaded > 0) {
    const auto kernels_s = [&](const std::vector<Op>& ops) {
      double sum = 0;
      for (const Op& op : ops) sum += op_time(op, tm);
      return sum;
    };
    const double d2h = offload_wait_s(offloaded, host.device_to_host_bandwidth, kernels_s(moe_fwd));
    const double h2d = offload_wait_s(offloaded, host.host_to_device_bandwidth, kernels_s(moe_bwd));
    // A copy the kernels hide costs nothing and books no wait.
    if (d2h > 0) moe_fwd.push_back(offload_wait_op("offload_d2h_wait", d2h));
    if (h2d > 0) moe_bwd.insert(moe_bwd.begin(), offload_wait_op("offload_h2d_wait", h2d));
    act_moe -= offloaded;
  }
  for (const std::vector<Op>* ops : {&fwd, &bwd, &recompute, &moe_fwd, &moe_bwd, &moe_recompute}) {
    time_once(*ops, &tm);
  }
}

PlanSpec bf16_plan(PlanSpec plan, const ComputeModel& compute) {
  plan.precision = compute.has_peak(Precision::kBf16) ? Precision::kBf16 : Precision::kFp16;
  plan.fp8_attention = false;
  plan.fp8_param_gather = false;
  return plan;
}

ModelKernels::ModelKernels(const Scenario& sc, const ComputeModel& compute)
    : low(compute, sc.model, sc.plan, sc.cluster.gpu.architecture, sc.cluster.host),
      sc_(sc),
      compute_(compute) {
  // first_last_layers_bf16: those layers' kernels at 16 bits (Megatron-Core enters no FP8 /
  // FP4 context for them: megatron/core/fp8_utils.py get_fp8_context, fp4_utils.py
  // get_fp4_context, by the layer's global number).
  if (sc.plan.first_last_layers_bf16) {
    bf16_ = std::make_unique<LayerKernels>(compute, sc.model, bf16_plan(sc.plan, compute),
                                           sc.cluster.gpu.architecture, sc.cluster.host);
  }
}

bool ModelKernels::is_bf16(int layer) const {
  return bf16_ != nullptr && sc_.plan.bf16_layer(layer, sc_.model.num_layers);
}

const LayerKernels& ModelKernels::of(int layer) {
  LayerDims kind;
  apply_layer_attention(sc_.model, layer, &kind);
  const bool b16 = is_bf16(layer);
  if (kind.window <= 0 && kind.chunk <= 0 && kind.rope == low.dims.rope) return b16 ? *bf16_ : low;
  std::unique_ptr<LayerKernels>& k = local_[{b16, kind.window, kind.chunk, kind.rope}];
  if (!k) {
    k = std::make_unique<LayerKernels>(compute_, sc_.model,
                                       b16 ? bf16_plan(sc_.plan, compute_) : sc_.plan,
                                       sc_.cluster.gpu.architecture, sc_.cluster.host, layer);
  }
  return *k;
}

}  // namespace trident
