// The work of a throttled GPU (cluster.stragglers.gpu_clock_fraction, docs/stragglers.md).
#ifndef TRIDENT_WORKLOAD_STRAGGLER_WORK_H_
#define TRIDENT_WORKLOAD_STRAGGLER_WORK_H_

#include "workload/stage_work.h"

namespace trident {

// Returns `work` as a GPU at `clock_fraction` of its peers' clock runs it: every kernel time
// (segments' compute and overlapped GEMMs, context-parallel attention blocks, passes' sums, the
// optimizer step) divided by the fraction; bytes, parameters and memory unchanged. HBM-bound
// kernels slow as much as tensor-core ones: a segment's time is one figure of the compute
// model, and throttling (power brake, thermal slowdown) lowers the clocks the memory-bound
// kernels' issue rate depends on too; for those it is an upper bound. Requires
// 0 < clock_fraction <= 1.
Workload throttled_workload(const Workload& work, double clock_fraction);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_STRAGGLER_WORK_H_
