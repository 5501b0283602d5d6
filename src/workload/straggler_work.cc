#include "workload/straggler_work.h"

namespace trident {
namespace {

void throttle(Pass* pass, double stretch) {
  pass->compute_s *= stretch;
  for (Segment& seg : pass->segments) {
    seg.compute_s *= stretch;
    seg.overlap_s *= stretch;
    for (RingStep& step : seg.ring) step.compute_s *= stretch;
  }
}

}  // namespace

Workload throttled_workload(const Workload& work, double clock_fraction) {
  Workload out = work;
  const double stretch = 1 / clock_fraction;
  for (StageWork& stage : out.stages) {
    stage.optimizer_s *= stretch;
    for (ChunkWork& chunk : stage.chunks) {
      throttle(&chunk.forward, stretch);
      throttle(&chunk.backward, stretch);
    }
  }
  return out;
}

}  // namespace trident
