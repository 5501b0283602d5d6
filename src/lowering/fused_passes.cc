#include "lowering/fused_passes.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace trident {

void append_fused_collectives(const Pass& pass, const FusedPass& fused, double start, double end,
                              int mb, int chunk, std::vector<Interval>* out) {
  const double elapsed = end - start;
  const bool stretched =
      fused.duration > 0 && std::abs(elapsed - fused.duration) > 1e-9 * fused.duration;
  const double scale = stretched ? elapsed / fused.duration : 1;
  for (const FusedCollective& fc : fused.collectives) {
    const Segment& seg = pass.segments[fc.segment];
    Interval iv;
    iv.start = std::min(end, start + fc.offset * scale);
    iv.end = std::min(end, iv.start + fc.duration * scale);
    iv.kind = IntervalKind::kTpComm;
    iv.tp = TpTiming::kClosedForm;
    iv.op = seg.tp_op;
    iv.bytes = seg.tp_bytes;
    iv.layer = seg.layer;
    iv.microbatch = mb;
    iv.chunk = static_cast<std::int16_t>(chunk);
    out->push_back(iv);
  }
}

long fused_collectives(const StageProgram& program, const std::vector<FusedPass>& forward,
                       const std::vector<FusedPass>& backward) {
  long n = 0;
  for (const Instr& in : program.instrs) {
    if (in.kind == InstrKind::kForward)
      n += static_cast<long>(forward[in.chunk].collectives.size());
    if (in.kind == InstrKind::kBackward) {
      n += static_cast<long>(backward[in.chunk].collectives.size());
    }
  }
  return n;
}

}  // namespace trident
