#include "workload/stage_work.h"

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <tuple>

#include "schedule/program.h"
#include "workload/activation_offload.h"
#include "workload/compute_model.h"
#include "workload/cp_attention.h"
#include "workload/eager_ops.h"
#include "workload/host_launch.h"
#include "workload/layer_ops.h"
#include "workload/local_attention.h"
#include "workload/moe_model.h"
#include "workload/moe_ops.h"
#include "workload/mtp.h"
#include "workload/nvfp4.h"
#include "workload/op_classes.h"
#include "workload/recompute_modules.h"
#include "workload/tp_overlap.h"

namespace trident {

double master_param_bytes(const PlanSpec& p) {
  // Megatron-Core's precision-aware optimizer passes store_param_remainders (default True,
  // M core/optimizer/optimizer_config.py:192, core/optimizer/__init__.py:576-588) with an fp32
  // master to TE's FusedAdam only when there is no FP8 or it is delayed scaling
  // (use_precision_aware_optimizer_no_fp8_or_ds_fp8); FusedAdam then keeps the low 16 bits of
  // the fp32 master beside each bf16 parameter (TE optimizers/fused_adam.py:213-215, 367-379).
  const bool bf16_params = p.precision == Precision::kBf16 ||
                           (p.precision == Precision::kFp8 && p.fp8_recipe == Fp8Recipe::kDelayed &&
                            !p.fp8_param_gather);
  if (p.precision_aware_optimizer && p.store_param_remainders &&
      p.main_params_dtype == StateDtype::kFp32 && bf16_params) {
    return 2;
  }
  return state_dtype_bytes(p.main_params_dtype);
}

namespace {

// Bytes per parameter of gradients: Megatron accumulates and reduces bf16 gradients in fp32,
// or in bf16 with grad_reduce_in_bf16 (DistributedDataParallelConfig.grad_reduce_in_fp32 off).
double grad_element_bytes(const PlanSpec& p) {
  return p.precision == Precision::kFp16 || p.grad_reduce_in_bf16 ? 2.0 : 4.0;
}
// Adam state per parameter: master weights, momentum and variance, fp32 unless the
// precision-aware optimizer keeps them narrower (12 B by default).
double optimizer_state_bytes(const PlanSpec& p) {
  return master_param_bytes(p) + state_dtype_bytes(p.exp_avg_dtype) +
         state_dtype_bytes(p.exp_avg_sq_dtype);
}
// HBM traffic of one fused Adam update per parameter: read master, main gradient, momentum
// and variance, write master, momentum and variance, and the 16-bit weights (2 B): 30 B in
// fp32.
double adam_bytes_per_param(const PlanSpec& p) {
  // A master stored as remainders also reads the bf16 parameter to rebuild the fp32 value
  // (TE's multi_tensor_adam_param_remainder, optimizers/fused_adam.py:367-379).
  const double remainder_read =
      master_param_bytes(p) < state_dtype_bytes(p.main_params_dtype) ? 2 : 0;
  return 2 * optimizer_state_bytes(p) + state_dtype_bytes(p.main_grads_dtype) + 2 + remainder_read;
}
// Megatron's default gradient bucket: max(40M, 1M x data-parallel size) parameters.
constexpr double kBucketParams = 40e6;
constexpr double kBucketParamsPerReplica = 1e6;

// How the ops of a pass are timed: linear GEMMs at the run precision, attention at the
// attention precision (BF16 under fp8 unless plan.fp8_attention), on the resolved backend.
struct Timing {
  const ComputeModel& cm;
  Precision linear = Precision::kBf16;
  Precision attention = Precision::kBf16;
  AttentionBackend backend = AttentionBackend::kUnfused;
  bool tp_overlap = false;  // plan.tp_comm_overlap
  GpuArchitecture arch = GpuArchitecture::kUnspecified;
  // plan.stack: whether a backward TP collective runs beside the next weight-gradient GEMM, and
  // the host's launch time per kernel (the repeated op lists wait for it).
  bool tp_grad_overlap = true;
  HostLaunch host;
  // The per-layer op lists every layer repeats, with their times computed once (op_time
  // reads them instead of timing the same op again per layer) and of each the wait for the
  // host it includes (host_launch.h).
  struct TimedList {
    const std::vector<Op>* ops;
    std::vector<double> times, waits;
  };
  std::vector<TimedList> timed;
};

double op_time(const Op& op, const Timing& tm);

// The precision an op's kernel runs at: linear GEMMs at the run precision, attention (fused or
// unfused) at the attention precision.
Precision op_precision(const Op& op, const Timing& tm) {
  return op.kind == OpKind::kGemm && op.linear ? tm.linear : tm.attention;
}

// Times `ops` once for `tm` (they must outlive its use).
void time_once(const std::vector<Op>& ops, Timing* tm) {
  std::vector<double> gpu;
  for (const Op& op : ops) gpu.push_back(op_time(op, *tm));
  std::vector<double> times = tm->host.active() ? host_bound_times(ops, gpu, tm->host) : gpu;
  std::vector<double> waits(ops.size(), 0.0);
  for (size_t i = 0; i < ops.size(); ++i) waits[i] = times[i] - gpu[i];
  tm->timed.push_back({&ops, std::move(times), std::move(waits)});
}

// Returns the list of tm.timed holding `op` and sets *index to its place there; null if none.
const Timing::TimedList* timed_list(const Op& op, const Timing& tm, size_t* index) {
  for (const Timing::TimedList& l : tm.timed) {
    if (!l.ops->empty() && &op >= l.ops->data() && &op < l.ops->data() + l.ops->size()) {
      *index = static_cast<size_t>(&op - l.ops->data());
      return &l;
    }
  }
  return nullptr;
}

Timing make_timing(const ComputeModel& cm, const PlanSpec& plan, const LayerDims& dims) {
  Timing t{cm,
           plan.precision,
           plan.precision,
           dims.attention,
           plan.tp_comm_overlap,
           GpuArchitecture::kUnspecified,
           plan.stack.tp_grad_overlap,
           host_launch(plan),
           {}};
  if (plan.precision == Precision::kFp8 || plan.precision == Precision::kFp4) {
    // NVFP4 leaves attention in BF16 (TE's NVFP4BlockScaling: fp8_dpa = False).
    const bool low = plan.precision == Precision::kFp8 && plan.fp8_attention;
    t.attention = low ? Precision::kFp8 : Precision::kBf16;
    // A GPU file without a bf16 peak times 16-bit work at fp16.
    if (!low && !cm.has_peak(Precision::kBf16)) t.attention = Precision::kFp16;
  }
  return t;
}

double op_time(const Op& op, const Timing& tm) {
  size_t i = 0;
  if (const Timing::TimedList* l = timed_list(op, tm, &i)) return l->times[i];
  if (op.fixed_s >= 0) return op.fixed_s;
  switch (op.kind) {
    // Tensor-core kernels run slower inside a step than in isolation: the sustained clock under
    // the power limit (gpu.clocks) and gpu.efficiency.in_training.
    case OpKind::kGemm: {
      const Precision p = op_precision(op, tm);
      if (op.sequential) {
        GemmShape one = op.gemm;
        one.batch = 1;
        return op.gemm.batch * tm.cm.gemm_time(one, p) / tm.cm.in_step(p);
      }
      return (op.grouped ? tm.cm.grouped_gemm_time(op.gemm, p) : tm.cm.gemm_time(op.gemm, p)) /
             tm.cm.in_step(p);
    }
    case OpKind::kAttention: {
      double time = tm.cm.attention_time(op.attention, tm.backend, tm.attention, op.backward);
      if (op.cp_block) {
        AttentionShape other = op.attention;
        other.s = op.attention.keys();
        other.kv_s = op.attention.s;
        time = std::max(time, tm.cm.attention_time(other, tm.backend, tm.attention, op.backward));
      }
      return time / tm.cm.in_step(tm.attention);
    }
    case OpKind::kMemory:
      return tm.cm.memory_time(op.bytes);
    case OpKind::kTpCollective:
    case OpKind::kCpTransfer:
    case OpKind::kEpCollective:
      return 0;
  }
  return 0;
}

// The per-kernel overhead inside op_time(op) (which tensor-core kernels pay at the in-step
// slowdown too), for booking it apart (docs/explain.md).
double overhead_in(const Op& op, const Timing& tm) {
  const double overhead = tm.cm.gpu().efficiency.kernel_overhead_s;
  if (op.kind == OpKind::kMemory) return overhead;
  return overhead / tm.cm.in_step(op_precision(op, tm));
}

// Returns op_time(op) and books the kernel to its class in `pass` (op_classes.h).
double timed(const Op& op, const Timing& tm, Pass* pass) {
  size_t i = 0;
  const Timing::TimedList* l = timed_list(op, tm, &i);  // found once: its time and its wait
  const double seconds = l ? l->times[i] : op_time(op, tm);
  if (seconds <= 0) return seconds;
  const bool tensor_core = op.kind == OpKind::kGemm || op.kind == OpKind::kAttention;
  const double wait = l ? l->waits[i] : 0;  // the host's share of op_time (host_launch.h)
  book_op(op, seconds - wait, overhead_in(op, tm),
          tensor_core ? tm.cm.peak(op_precision(op, tm)) : 0, tm.cm.gpu().memory_bandwidth,
          &pass->classes);
  book_host_wait(wait, &pass->classes);
  return seconds;
}

// Returns the optimizer step's seconds (the update moving `adam_bytes`, and under fp8 the
// weights' cast moving `cast_bytes`, each one memory-bound kernel) and books its kernels.
double timed_optimizer(const ComputeModel& cm, double adam_bytes, bool fp8, double cast_bytes,
                       ComputeClasses* classes) {
  const double overhead = cm.gpu().efficiency.kernel_overhead_s, hbm = cm.gpu().memory_bandwidth;
  double seconds = cm.memory_time(adam_bytes);
  book_kernel(OpClass::kOptimizer, 0, adam_bytes, seconds, overhead, 0, hbm, classes);
  if (fp8) {
    const double cast = cm.memory_time(cast_bytes);
    book_kernel(OpClass::kOptimizer, 0, cast_bytes, cast, overhead, 0, hbm, classes);
    seconds += cast;
  }
  return seconds;
}

// Appends `ops` to `pass`: compute accumulates until a TP collective closes the segment; a
// collective marked overlaps_next takes the following op as its concurrent compute. With t = 1
// the collectives vanish. Each segment closed by a collective records `layer`. Under
// tp_comm_overlap a ring-exchange all-gather takes the ops up to its GEMM as its concurrent
// compute, and a pipelined reduce-scatter the GEMM before it.
void append_ops(const std::vector<Op>& ops, const Timing& cm, int tensor, int layer, Pass* pass) {
  if (pass->segments.empty()) pass->segments.emplace_back();
  double last_op_s = 0;  // the op just appended to the open segment's compute
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    pass->flops += op.flops();
    pass->model_flops += op.model_flops();
    if (op.kind == OpKind::kCpTransfer || op.cp_ring) {
      // The ring runs before the segment's compute: start a segment if compute came first.
      const Segment& last = pass->segments.back();
      if (last.compute_s > 0 || last.grad_params > 0) pass->segments.emplace_back();
      Segment& seg = pass->segments.back();
      seg.layer = layer;
      if (op.kind == OpKind::kCpTransfer) {
        seg.ring.push_back({op.bytes, 0});
        pass->ring_steps += 1;
        pass->cp_bytes += op.bytes;
        // A transfer beside the block after it (an exposed one, e.g. all-to-all, runs alone).
        if (op.overlaps_next && i + 1 < ops.size() && ops[i + 1].kind == OpKind::kAttention) {
          const Op& block = ops[++i];
          pass->flops += block.flops();
          pass->model_flops += block.model_flops();
          seg.ring.back().compute_s = timed(block, cm, pass);
          pass->compute_s += seg.ring.back().compute_s;
        }
      } else if (op.kind == OpKind::kMemory && !seg.ring.empty()) {
        // A block's softmax correction or merge runs in its ring step (cp_attention.h).
        const double t = timed(op, cm, pass);
        seg.ring.back().compute_s += t;
        pass->compute_s += t;
      } else {
        seg.ring.push_back({0, timed(op, cm, pass)});
        pass->compute_s += seg.ring.back().compute_s;
      }
      continue;
    }
    const bool expert = op.kind == OpKind::kEpCollective;
    if (op.kind != OpKind::kTpCollective && !expert) {
      last_op_s = timed(op, cm, pass);
      pass->segments.back().compute_s += last_op_s;
      pass->compute_s += last_op_s;
      continue;
    }
    if (!expert && tensor == 1) continue;
    Segment& seg = pass->segments.back();
    seg.tp_bytes = op.bytes;
    seg.tp_op = op.collective;
    seg.layer = layer;
    seg.expert = expert;
    seg.combine = op.combine;
    pass->collectives += expert ? 0 : 1;
    pass->tp_bytes += expert ? 0 : op.bytes;
    pass->ep_collectives += expert ? 1 : 0;
    pass->ep_bytes += expert ? op.bytes : 0;
    const auto is_collective = [](const Op& o) {
      return o.kind == OpKind::kTpCollective || o.kind == OpKind::kEpCollective ||
             o.kind == OpKind::kCpTransfer || o.cp_ring;
    };
    const TpOverlap method = cm.tp_overlap ? op.userbuffers : TpOverlap::kNone;
    if (method == TpOverlap::kPipeline) {
      seg.compute_s -= last_op_s;
      seg.overlap_s = last_op_s;
      seg.tp_splits = kPipelineSplits;
    } else if (method == TpOverlap::kRingExchange) {
      // The GEMM (and an FP8 cast before it) consumes the gathered chunks.
      while (i + 1 < ops.size() && ops[i + 1].kind != OpKind::kTpCollective) {
        const Op& next = ops[++i];
        pass->flops += next.flops();
        pass->model_flops += next.model_flops();
        const double t = timed(next, cm, pass);
        seg.overlap_s += t;
        pass->compute_s += t;
        if (next.kind == OpKind::kGemm && next.linear) break;
      }
    } else if (op.overlaps_next && cm.tp_grad_overlap) {
      for (int n = 0; n < op.overlap_ops && i + 1 < ops.size() && !is_collective(ops[i + 1]); ++n) {
        const Op& next = ops[++i];
        pass->flops += next.flops();
        pass->model_flops += next.model_flops();
        const double t = timed(next, cm, pass);
        seg.overlap_s += t;
        pass->compute_s += t;
      }
    }
    seg.tp_overlap = method;
    seg.overlap_stretch = userbuffers_gemm_stretch(method, cm.arch);
    last_op_s = 0;
    pass->segments.emplace_back();
  }
}

// Opens a segment whose compute first uses the weights of `params` parameters gathered over
// the data-parallel group and `expert_params` over the expert-data-parallel group (a layer's
// forward under per-layer parameter gathers).
void weights_needed(double params, double expert_params, Pass* pass) {
  if (pass->segments.empty() || pass->segments.back().compute_s > 0 ||
      pass->segments.back().tp_bytes > 0) {
    pass->segments.emplace_back();
  }
  pass->segments.back().weight_params += params;
  pass->segments.back().expert_weight_params += expert_params;
}

// Marks `params` (and `expert_params` of routed experts, bucketed apart) as having final
// gradients at the current end of `pass`, and closes the segment there: the next layer's
// backward opens its own, so that buckets fill as each layer's gradients are produced
// (Megatron-Core's DDP hooks, one per parameter), also where no TP collective splits the pass
// (t = 1).
void grads_done(double params, double expert_params, Pass* pass) {
  if (pass->segments.empty()) pass->segments.emplace_back();
  pass->segments.back().grad_params += params;
  pass->segments.back().expert_grad_params += expert_params;
  pass->segments.emplace_back();
}

// Drops a trailing empty segment left by a pass that ends with a collective.
void finish(Pass* pass) {
  while (pass->segments.size() > 1 && pass->segments.back().compute_s == 0 &&
         pass->segments.back().tp_bytes == 0 && pass->segments.back().grad_params == 0 &&
         pass->segments.back().ring.empty()) {
    pass->segments.pop_back();
  }
}

// Weights, gradients and optimizer state per GPU of `params` parameters per GPU sharded over
// a group of `d` GPUs (the dp-cp group for dense weights, the expert-data-parallel group for
// routed experts; `layer`: the largest FSDP unit's, `bucket`: one gradient bucket's), under
// plan.dp_sharding:
//   weights    params w, or with optim_grads_params and d > 1 params w / d + 2 layer w (the
//              layer in use and the one prefetched, gathered whole)
//   gradients  params g, or with optim_grads / optim_grads_params and d > 1 params g / d + the
//              bucket (or layer) being reduced, unsharded; with grad_reduce_in_bf16 (g = 2)
//              the fp32 main gradients the optimizer steps on, 4 params / (d when sharded),
//              go to step_main_grads (held during the step only), unless the
//              precision-aware optimizer steps on bf16 main gradients
//   optimizer  12 params (master weights and moments, each in its state dtype), / d
//              unless no_shard
StageMemory sharded_memory(const PlanSpec& plan, double d, double params, double layer,
                           double bucket, double weight_elem, double grad_elem) {
  const double opt_share = plan.distributed_optimizer ? d : 1;
  StageMemory m;
  m.weights = plan.shards_params() && d > 1 ? params * weight_elem / d + 2 * layer * weight_elem
                                            : params * weight_elem;
  m.gradients = plan.shards_gradients() && d > 1
                    ? params * grad_elem / d + std::min(bucket, params) * grad_elem
                    : params * grad_elem;
  // The fp32 main gradients of a bf16 reduction (none when the precision-aware optimizer steps
  // on bf16 main gradients): Megatron's distributed optimizer makes them in step()
  // (_copy_model_grads_to_main_grads) and drops them at the next zero_grad, when no activation
  // is held, so build_workload counts them only where they exceed what the backward held.
  if (plan.grad_reduce_in_bf16 && plan.precision != Precision::kFp16 &&
      plan.main_grads_dtype == StateDtype::kFp32) {
    m.step_main_grads = params * 4 / opt_share;
  }
  m.optimizer = params * optimizer_state_bytes(plan) / opt_share;
  return m;
}

// The dense MLP's saved tensors per element of s b h / t (M core/transformer/mlp.py:257-336,
// MLP.forward): the activation function saves its input, the FC1 output g f / t wide, in 16
// bits (fusions/fused_bias_swiglu.py:184, 235 for SwiGLU, g = 2; bias_gelu and squared ReLU,
// activations.py:9-12, g = 1), and FC2 (TE Linear) saves its input, f / t wide, in 16 bits or
// as its FP8 cast with the recipe's scales (TE module/linear.py:619-661). (2g + 2) f / h: 16 for
// GPT's f = 4h, 21 for Llama-3 70B's SwiGLU with f = 3.5h.
// Returns the bytes per element Transformer Engine saves of a linear layer's input for its
// weight gradient: the FP8 cast and its scales under fp8, the column-wise NVFP4 copy under fp4
// (kNvfp4BytesPerElement), else the 16-bit input.
double saved_linear_input_bytes(const PlanSpec& p) {
  if (p.precision == Precision::kFp4) return kNvfp4BytesPerElement;
  if (p.precision == Precision::kFp8) return 1 + fp8_scale_bytes_per_element(p.fp8_recipe);
  return 2;
}

double dense_mlp_coefficient(const ModelSpec& m, const PlanSpec& p) {
  const double g = m.swiglu ? 2 : 1, f = double(m.ffn_hidden_size) / m.hidden_size;
  return (2 * g + saved_linear_input_bytes(p)) * f;
}

// Walks each stage's program and records the peak bytes (and count) of chunk activations
// forwarded but not yet backwarded.
void schedule_memory(const std::vector<StageProgram>& programs, Workload* w) {
  for (size_t s = 0; s < programs.size(); ++s) {
    StageWork& st = w->stages[s];
    double live = 0, peak = 0;
    int count = 0, peak_count = 0;
    for (const Instr& in : programs[s].instrs) {
      if (in.kind == InstrKind::kForward) {
        live += st.chunks[in.chunk].activation_bytes;
        peak = std::max(peak, live);
        peak_count = std::max(peak_count, ++count);
      } else if (in.kind == InstrKind::kBackward) {
        live -= st.chunks[in.chunk].activation_bytes;
        --count;
      }
    }
    st.memory.activations = peak;
    st.memory.microbatches_in_flight = peak_count;
  }
}

// Returns `ops` as the plan's software stack launches them: eager PyTorch splits the fused
// element-wise blocks (eager_ops.h).
std::vector<Op> stack_kernels(std::vector<Op> ops, const LayerDims& dims, const ModelSpec& model,
                              const PlanSpec& plan) {
  if (plan.stack.elementwise != ElementwiseKernels::kEager) return ops;
  return eager_ops(ops, dims, model.rms_norm);
}

// The layer dimensions of `layer` (its window, chunk and RoPE: local_attention.h), or of the
// model's plain layer when layer < 0.
LayerDims dims_of_layer(const ModelSpec& model, const PlanSpec& plan, GpuArchitecture arch,
                        int layer) {
  LayerDims d = make_layer_dims(model, plan, arch);
  if (layer >= 0) apply_layer_attention(model, layer, &d);
  return d;
}

// The kernels of one transformer layer at one precision, timed once, with the activations
// they keep: the plan's, or BF16 for the layers first_last_layers_bf16 keeps there.
struct LayerKernels {
  // `layer` >= 0: the kernels of that layer's attention kind (local_attention.h); < 0: of a
  // layer with the whole causal prefix and the model's RoPE.
  LayerKernels(const ComputeModel& compute, const ModelSpec& model, const PlanSpec& plan,
               GpuArchitecture arch, const HostSpec& host, int layer = -1)
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
      recompute = alternate ? alternate_matmul_recompute(fwd, dims)
                            : module_recompute_ops(fwd, plan, false);
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
      const double d2h =
          offload_wait_s(offloaded, host.device_to_host_bandwidth, kernels_s(moe_fwd));
      const double h2d =
          offload_wait_s(offloaded, host.host_to_device_bandwidth, kernels_s(moe_bwd));
      // A copy the kernels hide costs nothing and books no wait.
      if (d2h > 0) moe_fwd.push_back(offload_wait_op("offload_d2h_wait", d2h));
      if (h2d > 0) moe_bwd.insert(moe_bwd.begin(), offload_wait_op("offload_h2d_wait", h2d));
      act_moe -= offloaded;
    }
    for (const std::vector<Op>* ops :
         {&fwd, &bwd, &recompute, &moe_fwd, &moe_bwd, &moe_recompute}) {
      time_once(*ops, &tm);
    }
  }
  LayerKernels(const LayerKernels&) = delete;
  LayerKernels& operator=(const LayerKernels&) = delete;

  LayerDims dims;
  Timing tm;
  std::vector<Op> fwd, bwd, recompute, moe_fwd, moe_bwd, moe_recompute;
  double act = 0, act_moe = 0;  // activation bytes kept per dense / MoE layer
};

// Returns `plan` with its linear layers in BF16 (FP16 on a GPU file without a BF16 peak):
// the layers first_last_layers_bf16 keeps out of FP8 / FP4.
PlanSpec bf16_plan(PlanSpec plan, const ComputeModel& compute) {
  plan.precision = compute.has_peak(Precision::kBf16) ? Precision::kBf16 : Precision::kFp16;
  plan.fp8_attention = false;
  plan.fp8_param_gather = false;
  return plan;
}

}  // namespace

double layer_params(const ModelSpec& m) {
  const double h = m.hidden_size, f = double(m.ffn_hidden_size);
  const double kv = 2 * h * m.num_query_groups / m.num_attention_heads;
  // Linear biases with add_bias_linear (ModelSpec::linear_biases: by default GPT-style models
  // carry them, gated Llama-style ones not). Two norms per layer: LayerNorm has a weight and a
  // bias, RMSNorm a weight.
  const double norms = m.rms_norm ? 2 * h : 4 * h;
  const bool bias = m.linear_biases();
  if (m.swiglu) return attention_params(m) + 3 * h * f + (bias ? 2 * f + h : 0) + norms;
  const double qk_norm = m.qk_layernorm ? (m.rms_norm ? 2 : 4) * m.head_dim() : 0;
  return h * (h + kv) + h * h + 2 * h * f + qk_norm + (bias ? (h + kv) + h + f + h : 0) + norms;
}

double model_params(const ModelSpec& m) {
  const double h = m.hidden_size, v = double(m.vocab_size);
  const double embed = v * h + (m.learned_position_embeddings ? m.seq_length * h : 0);
  const double output = m.untie_embeddings_and_output_weights ? v * h : 0;
  const double final_norm = m.rms_norm ? h : 2 * h;
  double layers = 0;
  for (int l = 0; l < m.num_layers; ++l) layers += layer_params_at(m, l);
  return layers + embed + output + final_norm;
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

double memory_margin_bytes(const ClusterSpec& cluster, const Workload& workload) {
  double peak = 0;
  for (const StageWork& st : workload.stages) peak = std::max(peak, st.memory.device_total());
  return cluster.gpu.memory_bytes - peak;
}

std::vector<int> virtual_stage_layers(const ModelSpec& model, const PlanSpec& plan) {
  if (!plan.pipeline_layers.empty()) return plan.pipeline_layers;
  const int chunks = plan.pipeline * plan.virtual_stages;
  return std::vector<int>(chunks, model.num_layers / chunks);
}

Workload build_workload(const Scenario& sc) { return build_workload(sc, build_programs(sc.plan)); }

Workload build_workload(const Scenario& sc, const std::vector<StageProgram>& programs) {
  const ModelSpec& model = sc.model;
  const PlanSpec& plan = sc.plan;
  const GpuArchitecture arch = sc.cluster.gpu.architecture;
  const ComputeModel compute(sc.cluster.gpu, plan.precision);
  const LayerKernels low(compute, model, plan, arch, sc.cluster.host);
  const LayerDims& dims = low.dims;
  const Timing& cm = low.tm;
  // The stack's kernels for the embedding and output layer (the layers' are in LayerKernels).
  const auto stack_ops = [&](std::vector<Op> ops) { return stack_kernels(ops, dims, model, plan); };
  // first_last_layers_bf16: those layers' kernels at 16 bits (Megatron-Core enters no FP8 /
  // FP4 context for them: megatron/core/fp8_utils.py get_fp8_context, fp4_utils.py
  // get_fp4_context, by the layer's global number).
  std::unique_ptr<LayerKernels> bf16;
  if (plan.first_last_layers_bf16) {
    bf16 = std::make_unique<LayerKernels>(compute, model, bf16_plan(plan, compute), arch,
                                          sc.cluster.host);
  }
  const auto is_bf16 = [&](int layer) {
    return bf16 != nullptr && plan.bf16_layer(layer, model.num_layers);
  };
  // Layers whose attention differs from the plain one (a sliding window, chunks, no RoPE:
  // local_attention.h) get kernels of their kind, built once per kind.
  std::map<std::tuple<bool, double, double, bool>, std::unique_ptr<LayerKernels>> local;
  const auto kernels = [&](int layer) -> const LayerKernels& {
    LayerDims kind;
    apply_layer_attention(model, layer, &kind);
    const bool b16 = is_bf16(layer);
    if (kind.window <= 0 && kind.chunk <= 0 && kind.rope == low.dims.rope) return b16 ? *bf16 : low;
    std::unique_ptr<LayerKernels>& k = local[{b16, kind.window, kind.chunk, kind.rope}];
    if (!k) {
      k = std::make_unique<LayerKernels>(compute, model, b16 ? bf16_plan(plan, compute) : plan,
                                         arch, sc.cluster.host, layer);
    }
    return *k;
  };
  // Megatron's data-parallel group with context parallelism (d * cp) reduces the gradients and
  // shards the distributed optimizer (parallel_state.get_data_parallel_group(
  // with_context_parallel=True)).
  const double t = plan.tensor, h = model.hidden_size, d = plan.data_context();
  const int p = plan.pipeline, v = plan.virtual_stages;
  const double ep = plan.expert_parallel;
  // A MoE layer's GPU holds the non-expert weights split over t, and E / EP experts, each
  // split over ETP (expert_tensor_parallel_size).
  const double moe_expert_params =
      model.moe() ? model.num_experts / ep * routed_expert_params(model) / plan.expert_tensor() : 0;
  const double moe_layer_params =
      model.moe() ? (attention_params(model) + router_params(model) + shared_expert_params(model) +
                     (model.rms_norm ? 2 * h : 4 * h)) /
                            t +
                        moe_expert_params
                  : 0;
  const std::vector<int> layers = virtual_stage_layers(model, plan);
  const double per_layer_params = layer_params(model) / t;
  const double vocab_params = double(model.vocab_size) * h / t;
  const double pos_params = model.learned_position_embeddings ? double(model.seq_length) * h : 0;
  const double final_norm = model.rms_norm ? h : 2 * h;
  // The output layer reuses the embedding matrix; on another stage it holds a copy.
  const bool output_copy = model.untie_embeddings_and_output_weights || p > 1;
  // With EP = 1 and ETP = t the expert-data-parallel group is the data-parallel group: the
  // experts' gradients travel with the rest.
  const bool experts_apart = plan.expert_parallel > 1 || plan.expert_tensor() != plan.tensor;
  const double apart_params = experts_apart ? moe_expert_params : 0;
  const bool fp8 = plan.precision == Precision::kFp8;
  const bool fp4 = plan.precision == Precision::kFp4;
  // Under fp8 the weights stay 16-bit (Megatron's parameters) and Transformer Engine adds FP8
  // copies, cast once per step (Megatron passes is_first_microbatch, so later micro-batches
  // reuse them): timed with the optimizer step.
  const double fp8_weight_bytes = fp8 ? fp8_weight_bytes_per_param(plan.fp8_recipe, arch) : 0;
  const double fp8_weight_cast = fp8 ? fp8_cast_bytes_per_element(plan.fp8_recipe, arch) : 0;
  // FP8 primary weights (fp8_param_gather) keep no 16-bit copy; the distributed optimizer
  // gathers one FP8 layout with its scales.
  const bool fp8_only = fp8 && plan.fp8_param_gather;
  const double weight_bytes = fp8_only ? 0.0 : fp8 || fp4 ? 2.0 : precision_bytes(plan.precision);
  const double gather_bytes = fp8_only ? fp8_gather_bytes_per_param(plan.fp8_recipe) : weight_bytes;
  const double tokens = double(plan.micro_batch_size) * dims.s;  // per rank: seq / cp
  const bool gather_bwd = plan.shards_params() && d > 1;
  const bool gather_fwd = gather_bwd || (plan.overlap_param_gather && d > 1);
  // Megatron-FSDP keeps a MoE layer's routed experts in parameter groups of their own, sharded
  // over the expert-data-parallel group (megatron_fsdp/param_and_grad_buffer.py: groups keyed
  // by FSDP unit and is_expert_param, expert buffers on the expt_dp group); torchtitan's
  // apply_fsdp shards `moe.experts` over its efsdp mesh likewise. Both are gathered with their
  // layer, before its forward and again before its backward. Under overlap_param_gather the
  // distributed optimizer's expert buckets are gathered behind the forward likewise.
  const double edp = plan.expert_data_parallel();
  const bool experts_gathered = edp > 1 && apart_params > 0;
  const bool gather_experts_bwd = plan.shards_params() && experts_gathered;
  const bool gather_experts_fwd =
      gather_experts_bwd ||
      (plan.overlap_param_gather && plan.distributed_optimizer && d > 1 && experts_gathered);

  Workload w;
  w.total_params = model_params(model) + mtp_params(model);
  // Multi-token prediction (mtp.h): its depths run on virtual stage mtp_vs, each with its own
  // weights per GPU (norms and eh_proj / t, and a layer of the last layer's kind).
  const int mtp_vs = mtp_virtual_stage(model, plan);
  const bool mtp_moe = mtp_layer_is_moe(model);
  const double mtp_head_params = (3 * final_norm + 2 * h * h) / t;
  const double mtp_depth = mtp_head_params + (mtp_moe ? moe_layer_params : per_layer_params);
  const double mtp_apart = mtp_moe ? apart_params : 0;
  w.stages.resize(p);
  std::vector<int> first_layer(p * v + 1, 0);
  std::partial_sum(layers.begin(), layers.end(), first_layer.begin() + 1);
  for (int s = 0; s < p; ++s) {
    StageWork& st = w.stages[s];
    st.chunks.resize(v);
    // Transformer-layer parameters whose linear layers run at the plan's precision, and those
    // first_last_layers_bf16 keeps in BF16.
    double low_params = 0, bf16_params = 0;
    // The stage's smallest and largest FSDP unit reduced over d cp, and its largest experts'.
    double min_unit = per_layer_params, max_unit = 0, max_expert_unit = 0;
    bool any_layer = false;
    // Embedding, final norm and output layer: never cast to FP8 (the word embedding is a
    // lookup, the output layer a BF16 ColumnParallelLinear, M models/gpt/gpt_model.py:272-276).
    double st_16bit_params = 0;
    for (int c = 0; c < v; ++c) {
      const int vs = c * p + s;
      ChunkWork& ch = st.chunks[c];
      ch.first_layer = first_layer[vs];
      ch.num_layers = layers[vs];
      ch.has_embedding = vs == 0;
      ch.has_output = vs == p * v - 1;
      double params = 0, expert_params = 0;
      int moe_layers = 0;
      ch.activation_bytes = 0;
      for (int l = 0; l < ch.num_layers; ++l) {
        const bool moe = model.is_moe_layer(ch.first_layer + l);
        moe_layers += moe ? 1 : 0;
        const LayerKernels& k = kernels(ch.first_layer + l);
        ch.activation_bytes += moe ? k.act_moe : k.act;
        (is_bf16(ch.first_layer + l) ? bf16_params : low_params) +=
            moe ? moe_layer_params : per_layer_params;
        params += moe ? moe_layer_params : per_layer_params;
        expert_params += moe ? apart_params : 0;
        // FSDP units: the layer's parameters reduced over d cp, and its experts apart.
        const double unit = moe ? moe_layer_params - apart_params : per_layer_params;
        min_unit = any_layer ? std::min(min_unit, unit) : unit;
        any_layer = true;
        max_unit = std::max(max_unit, unit);
        if (moe) max_expert_unit = std::max(max_expert_unit, apart_params);
      }

      const double out = final_norm + (output_copy ? vocab_params : 0);
      const double embed = vocab_params + pos_params;
      // Per-layer parameter gathers: each layer's forward (and, with sharded weights, its
      // backward) first waits for its weights.
      // `x`: the layer's routed experts reduced apart (gathered over the expert-data group).
      const auto fwd_weights = [&](double n, double x) {
        x = gather_experts_fwd ? x : 0;
        if (gather_fwd || x > 0) weights_needed(gather_fwd ? n : 0, x, &ch.forward);
      };
      const auto bwd_weights = [&](double n, double x) {
        x = gather_experts_bwd ? x : 0;
        if (gather_bwd || x > 0) weights_needed(gather_bwd ? n : 0, x, &ch.backward);
      };
      if (ch.has_embedding) {
        fwd_weights(embed, 0);
        append_ops(stack_ops(embedding_forward_ops(dims)), cm, plan.tensor, kLayerEmbedding,
                   &ch.forward);
      }
      for (int l = 0; l < ch.num_layers; ++l) {
        const int layer = ch.first_layer + l;
        const bool moe = model.is_moe_layer(layer);
        fwd_weights(moe ? moe_layer_params - apart_params : per_layer_params,
                    moe ? apart_params : 0);
        const LayerKernels& k = kernels(layer);
        append_ops(moe ? k.moe_fwd : k.fwd, k.tm, plan.tensor, layer, &ch.forward);
      }
      // Megatron's GPTModel._postprocess runs the MTP block before the output layer.
      const bool mtp_here = vs == mtp_vs;
      for (int k = 0; mtp_here && k < model.mtp_num_layers; ++k) {
        const int layer = model.num_layers + k;
        fwd_weights(mtp_depth - mtp_apart, mtp_apart);
        append_ops(stack_ops(mtp_head_forward_ops(dims)), cm, plan.tensor, layer, &ch.forward);
        append_ops(mtp_moe ? low.moe_fwd : low.fwd, low.tm, plan.tensor, layer, &ch.forward);
        append_ops(stack_ops(output_forward_ops(dims)), cm, plan.tensor, kLayerOutput, &ch.forward);
      }
      if (ch.has_output) {
        fwd_weights(out, 0);
        append_ops(stack_ops(output_forward_ops(dims)), cm, plan.tensor, kLayerOutput, &ch.forward);
      }
      finish(&ch.forward);

      if (ch.has_output) {
        bwd_weights(out, 0);
        append_ops(stack_ops(output_backward_ops(dims)), cm, plan.tensor, kLayerOutput,
                   &ch.backward);
        grads_done(out, 0, &ch.backward);
        params += out;
        st_16bit_params += out;
      }
      double mtp_recompute_flops = 0, local_recomputed = 0;
      int local_layers = 0, local_moe_layers = 0;
      for (int k = model.mtp_num_layers - 1; mtp_here && k >= 0; --k) {
        const int layer = model.num_layers + k;
        bwd_weights(mtp_depth - mtp_apart, mtp_apart);
        append_ops(stack_ops(output_backward_ops(dims)), cm, plan.tensor, kLayerOutput,
                   &ch.backward);
        if (plan.recompute == Recompute::kFull) {
          // MultiTokenPredictionLayer._checkpointed_forward re-runs eh_proj and the layer.
          const std::vector<Op> head = stack_ops(mtp_head_forward_ops(dims, false));
          append_ops(head, cm, plan.tensor, layer, &ch.backward);
          mtp_recompute_flops += gemm_flops(head);
        }
        const std::vector<Op>& again = mtp_moe ? low.moe_recompute : low.recompute;
        append_ops(again, low.tm, plan.tensor, layer, &ch.backward);
        mtp_recompute_flops += gemm_flops(again);
        append_ops(mtp_moe ? low.moe_bwd : low.bwd, low.tm, plan.tensor, layer, &ch.backward);
        append_ops(stack_ops(mtp_head_backward_ops(dims)), cm, plan.tensor, layer, &ch.backward);
        grads_done(mtp_depth - mtp_apart, mtp_apart, &ch.backward);
        params += mtp_depth;
        expert_params += mtp_apart;
        low_params += mtp_depth;
        const double unit = mtp_depth - mtp_apart;
        min_unit = any_layer ? std::min(min_unit, unit) : unit;
        any_layer = true;
        max_unit = std::max(max_unit, unit);
        max_expert_unit = std::max(max_expert_unit, mtp_apart);
        ch.activation_bytes += mtp_depth_activation_bytes(
            model, plan, mtp_moe ? low.act_moe : low.act, saved_linear_input_bytes(plan));
      }
      if (mtp_here) {
        // The MTP stage embeds the shifted tokens and computes logits itself: GPTModel builds
        // the word embedding and the output layer where mtp_process holds
        // (megatron/core/models/gpt/gpt_model.py), so away from the first (last) stage it
        // holds a copy; tied, the one matrix serves both.
        const bool tied = !model.untie_embeddings_and_output_weights;
        const double word = ch.has_embedding || (tied && ch.has_output) ? 0 : vocab_params;
        const double copies =
            word + (ch.has_embedding ? 0 : pos_params) + (ch.has_output || tied ? 0 : vocab_params);
        grads_done(copies, 0, &ch.backward);
        params += copies;
        st_16bit_params += copies;
        if (mtp_moe) st.memory.dispatch_buffers = moe_dispatch_buffer_bytes(model, plan);
        st.memory.logits_transient = tokens * double(model.vocab_size) / t * 2;
      }
      for (int l = 0; l < ch.num_layers; ++l) {
        // Backward runs the chunk's layers last to first.
        const int layer = ch.first_layer + ch.num_layers - 1 - l;
        const bool moe = model.is_moe_layer(layer);
        bwd_weights(moe ? moe_layer_params - apart_params : per_layer_params,
                    moe ? apart_params : 0);
        const LayerKernels& k = kernels(layer);
        append_ops(moe ? k.moe_recompute : k.recompute, k.tm, plan.tensor, layer, &ch.backward);
        // Local layers' recomputed FLOPs are their own; the plain ones are counted below.
        if (&k != &low && &k != bf16.get()) {
          local_recomputed += gemm_flops(moe ? k.moe_recompute : k.recompute);
          ++local_layers;
          local_moe_layers += moe ? 1 : 0;
        }
        append_ops(moe ? k.moe_bwd : k.bwd, k.tm, plan.tensor, layer, &ch.backward);
        // Buckets carry the gradients data parallelism reduces; the experts' reduce apart.
        grads_done(moe ? moe_layer_params - apart_params : per_layer_params, moe ? apart_params : 0,
                   &ch.backward);
      }
      if (ch.has_embedding) {
        bwd_weights(embed, 0);
        append_ops(stack_ops(embedding_backward_ops(dims)), cm, plan.tensor, kLayerEmbedding,
                   &ch.backward);
        grads_done(embed, 0, &ch.backward);
        params += embed;
        st_16bit_params += embed;
      }
      finish(&ch.backward);
      // Model FLOPs leave the recomputed ops out; HFU counts them (each as model FLOPs count
      // it, so that HFU equals MFU without recomputation and exceeds it with).
      const int plain_moe = moe_layers - local_moe_layers;
      const double recomputed =
          (ch.num_layers - local_layers - plain_moe) * gemm_flops(low.recompute) +
          plain_moe * gemm_flops(low.moe_recompute) + local_recomputed + mtp_recompute_flops;
      ch.backward.model_flops -= recomputed;
      ch.params_per_gpu = params;
      st.expert_params_per_gpu += expert_params;
      if (moe_layers > 0) st.memory.dispatch_buffers = moe_dispatch_buffer_bytes(model, plan);
      // The vocab-parallel cross-entropy saves the fp32 softmax of each micro-batch's logits
      // (M core/tensor_parallel/cross_entropy.py:20-29 makes the fp32 copy, 181 saves
      // exp_logits); the 16-bit logits (a BF16 ColumnParallelLinear's output, also under fp8)
      // live only until the loss of their micro-batch is computed.
      if (ch.has_output) {
        const double logits = tokens * double(model.vocab_size) / t;
        ch.activation_bytes += logits * 4;
        st.memory.logits_transient = logits * 2;
      }

      st.num_layers += ch.num_layers;
      st.params_per_gpu += params;
      st.compute.add(ch.forward.classes, plan.num_microbatches);
      st.compute.add(ch.backward.classes, plan.num_microbatches);
      const double replicas = t * d * plan.num_microbatches;
      w.model_flops_per_step += replicas * (ch.forward.model_flops + ch.backward.model_flops);
      w.hardware_flops_per_step +=
          replicas * (ch.forward.model_flops + ch.backward.model_flops + recomputed);
    }
    const double params = st.params_per_gpu;
    // Expert weights: their gradients reduce and their optimizer state shards over the
    // expert-data-parallel group (t cp d / (EP ETP)), the rest over d cp (Megatron-Core's
    // expert DDP).
    const double experts = st.expert_params_per_gpu, dense = params - experts;
    // Each copy of the distributed optimizer (num_distributed_optimizer_instances) steps its
    // d cp / instances GPUs' shards: every GPU steps instances times the parameters.
    const int copies = plan.distributed_optimizer_instances;
    const double opt_share = plan.distributed_optimizer ? plan.optimizer_shards() : 1;
    const double grad_elem = grad_element_bytes(plan);
    const double expert_share =
        plan.distributed_optimizer ? double(plan.expert_data_parallel()) / copies : 1;
    const double sharded = dense / opt_share + experts / expert_share;
    st.grad_bytes = dense * grad_elem;
    st.param_gather_bytes = plan.distributed_optimizer ? dense * gather_bytes : 0;
    st.expert_grad_bytes = experts * grad_elem;
    st.expert_param_gather_bytes = plan.distributed_optimizer ? experts * gather_bytes : 0;
    // The weights' FP8 / NVFP4 copies are cast once a step with the optimizer: the transformer
    // layers' linear weights at the plan's precision (not the embedding and output layer, D6,
    // nor the layers first_last_layers_bf16 keeps in BF16).
    const double cast_bytes =
        low_params * (fp4 ? nvfp4_weight_cast_bytes_per_param() : fp8_weight_cast);
    // Optimizer CPU offload: the host steps its share (optimizer_offload.h); the GPU the rest.
    // Its shard holds about 4 weight matrices a layer of the stage, / d cp.
    st.offload = optimizer_offload(
        plan, sc.cluster, sharded,
        4.0 * st.num_layers / (plan.distributed_optimizer ? plan.optimizer_shards() : 1));
    const double on_gpu = sharded - st.offload.params;
    st.optimizer_s = timed_optimizer(compute, on_gpu * adam_bytes_per_param(plan), fp8 || fp4,
                                     cast_bytes, &st.compute);
    st.p2p_bytes = tokens * h * dims.elem / (plan.sequence_parallel ? t : 1);
    st.grad_bucket_params = plan.grad_bucket_size > 0
                                ? double(plan.grad_bucket_size)
                                : std::max(kBucketParams, kBucketParamsPerReplica * d);
    // Megatron-Core FSDP reduce-scatters each FSDP unit (a transformer layer) as its backward
    // ends. Dense parameters shard over the data-parallel group; expert parameters (reduced
    // apart) over the expert-data-parallel group, in buckets of one layer's experts. The
    // smallest unit as the bucket size launches a bucket at every layer's end.
    st.expert_grad_bucket_params = st.grad_bucket_params;
    if (plan.shards_params()) {
      st.grad_bucket_params = min_unit;
      st.expert_grad_bucket_params = max_expert_unit;
    }
    const double dispatch_buffers = st.memory.dispatch_buffers;
    const double logits_transient = st.memory.logits_transient;
    const double weight_elem = weight_bytes + fp8_weight_bytes;
    const bool fsdp = plan.shards_params();
    // One distributed-optimizer copy shards over d cp / instances GPUs (Megatron-Core's
    // intra_partial_data_parallel group), the experts' over EDP / instances.
    const double shards = plan.optimizer_shards();
    const double expert_shards = edp / copies;
    st.memory = sharded_memory(plan, shards, dense, max_unit,
                               fsdp ? max_unit : st.grad_bucket_params, weight_elem, grad_elem);
    st.memory.dispatch_buffers = dispatch_buffers;
    st.memory.logits_transient = logits_transient;
    // The embedding and output weights stay 16-bit, without FP8 copies.
    if (fp8) {
      const double share = fsdp && shards > 1 ? shards : 1;
      st.memory.weights -= st_16bit_params * (weight_elem - 2) / share;
    }
    st.memory.reserved = reserved_memory(sc.cluster, model, plan, s);
    const StageMemory expert_memory =
        sharded_memory(plan, expert_shards, experts, max_expert_unit,
                       fsdp ? max_expert_unit : st.grad_bucket_params, weight_elem, grad_elem);
    st.memory.weights += expert_memory.weights;
    st.memory.gradients += expert_memory.gradients;
    st.memory.optimizer += expert_memory.optimizer;
    st.memory.step_main_grads += expert_memory.step_main_grads;
    // fp8 and first_last_layers_bf16: no FP8 copies of the BF16 layers (their share under
    // optim_grads_params); fp4: NVFP4 copies of the FP4 layers only, unsharded (TE caches them
    // per module, docs/memory.md D7).
    if (fp8) {
      st.memory.weights -= bf16_params * fp8_weight_bytes / (fsdp && shards > 1 ? shards : 1);
    }
    if (fp4) st.memory.weights += low_params * nvfp4_weight_bytes_per_param();
    // Offload: the host holds the offloaded share of the optimizer state.
    if (st.offload.active) {
      st.memory.optimizer *= 1 - plan.optimizer_offload_fraction;
      st.memory.host_optimizer = st.offload.host_bytes;
    }
    if (plan.context > 1) st.memory.cp_buffers = cp_buffer_bytes(dims);
  }
  schedule_memory(programs, &w);
  // The peak is the larger of the backward's (activations and buffers held) and the optimizer
  // step's (fp32 main gradients held, no activations): what the step needs beyond the
  // activations counts with the gradients.
  for (StageWork& st : w.stages) {
    const StageMemory& m = st.memory;
    st.memory.gradients +=
        std::max(0.0, m.step_main_grads - (m.activations + m.cp_buffers + m.dispatch_buffers));
  }
  w.active_params = active_params(model) + mtp_active_params(model);
  w.megatron_flops_per_step = megatron_model_flops(model, plan.global_batch_size) +
                              mtp_megatron_flops(model, plan.global_batch_size);
  w.tokens_per_expert_mean = moe_tokens_per_expert(model, plan);
  w.tokens_per_expert_max = w.tokens_per_expert_mean * moe_busiest_expert_load(plan);
  return w;
}

}  // namespace trident
