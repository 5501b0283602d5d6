// How the ops of a pass are timed on the GPU's compute model, and the booking of each kernel's
// seconds to its class (op_classes.h). Internal to the building of stage work (stage_work.cc).
#ifndef TRIDENT_WORKLOAD_PASS_TIMING_H_
#define TRIDENT_WORKLOAD_PASS_TIMING_H_

#include <vector>

#include "config/scenario.h"
#include "workload/compute_classes.h"
#include "workload/compute_model.h"
#include "workload/host_launch.h"
#include "workload/layer_ops.h"
#include "workload/stage_work.h"

namespace trident {

// How the ops of a pass are timed: linear GEMMs at the run precision, attention at the
// attention precision (BF16 under fp8 unless plan.fp8_attention), on the resolved backend.
struct PassTiming {
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

// Returns the timing of `plan`'s ops on `cm`, attention on dims.attention's backend (arch left
// unspecified for the caller to set). Requires `cm` to outlive the result.
PassTiming make_timing(const ComputeModel& cm, const PlanSpec& plan, const LayerDims& dims);

// Times `ops` once for `tm` (they must outlive its use).
void time_once(const std::vector<Op>& ops, PassTiming* tm);

// Returns the seconds of `op` under `tm`: its time from tm.timed when a timed list holds it,
// else its fixed time or its kind's model (0 for collectives and transfers).
double op_time(const Op& op, const PassTiming& tm);

// Returns op_time(op) and books the kernel to its class in `pass` (op_classes.h).
double timed_op(const Op& op, const PassTiming& tm, Pass* pass);

// Returns the optimizer step's seconds (the update moving `adam_bytes`, and under fp8 the
// weights' cast moving `cast_bytes`, each one memory-bound kernel) and books its kernels.
double timed_optimizer(const ComputeModel& cm, double adam_bytes, bool fp8, double cast_bytes,
                       ComputeClasses* classes);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_PASS_TIMING_H_
