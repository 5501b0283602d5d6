#include "workload/pass_timing.h"

#include <algorithm>
#include <utility>

#include "workload/op_classes.h"

namespace trident {

namespace {

// The precision an op's kernel runs at: linear GEMMs at the run precision, attention (fused or
// unfused) at the attention precision.
Precision op_precision(const Op& op, const PassTiming& tm) {
  return op.kind == OpKind::kGemm && op.linear ? tm.linear : tm.attention;
}

// Returns the list of tm.timed holding `op` and sets *index to its place there; null if none.
const PassTiming::TimedList* timed_list(const Op& op, const PassTiming& tm, size_t* index) {
  for (const PassTiming::TimedList& l : tm.timed) {
    if (!l.ops->empty() && &op >= l.ops->data() && &op < l.ops->data() + l.ops->size()) {
      *index = static_cast<size_t>(&op - l.ops->data());
      return &l;
    }
  }
  return nullptr;
}

// The per-kernel overhead inside op_time(op) (which tensor-core kernels pay at the in-step
// slowdown too), for booking it apart (docs/explain.md).
double overhead_in(const Op& op, const PassTiming& tm) {
  const double overhead = tm.cm.gpu().efficiency.kernel_overhead_s;
  if (op.kind == OpKind::kMemory) return overhead;
  return overhead / tm.cm.in_step(op_precision(op, tm));
}

}  // namespace

void time_once(const std::vector<Op>& ops, PassTiming* tm) {
  std::vector<double> gpu;
  for (const Op& op : ops) gpu.push_back(op_time(op, *tm));
  std::vector<double> times = tm->host.active() ? host_bound_times(ops, gpu, tm->host) : gpu;
  std::vector<double> waits(ops.size(), 0.0);
  for (size_t i = 0; i < ops.size(); ++i) waits[i] = times[i] - gpu[i];
  tm->timed.push_back({&ops, std::move(times), std::move(waits)});
}

PassTiming make_timing(const ComputeModel& cm, const PlanSpec& plan, const LayerDims& dims) {
  PassTiming t{cm,
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

double op_time(const Op& op, const PassTiming& tm) {
  size_t i = 0;
  if (const PassTiming::TimedList* l = timed_list(op, tm, &i)) return l->times[i];
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

double timed_op(const Op& op, const PassTiming& tm, Pass* pass) {
  size_t i = 0;
  const PassTiming::TimedList* l = timed_list(op, tm, &i);  // found once: its time and its wait
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

}  // namespace trident
