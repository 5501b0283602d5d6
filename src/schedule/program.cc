#include "schedule/program.h"

#include <algorithm>

namespace trident {
namespace {

void forward(int stage, int stages, int mb, std::vector<Instr>* out) {
  if (stage > 0) out->push_back({InstrKind::kRecvActivation, mb});
  out->push_back({InstrKind::kForward, mb});
  if (stage < stages - 1) out->push_back({InstrKind::kSendActivation, mb});
}

void backward(int stage, int stages, int mb, std::vector<Instr>* out) {
  if (stage < stages - 1) out->push_back({InstrKind::kRecvGradient, mb});
  out->push_back({InstrKind::kBackward, mb});
  if (stage > 0) out->push_back({InstrKind::kSendGradient, mb});
}

}  // namespace

const char* instr_kind_name(InstrKind kind) {
  switch (kind) {
    case InstrKind::kRecvActivation:
      return "recv_activation";
    case InstrKind::kForward:
      return "forward";
    case InstrKind::kSendActivation:
      return "send_activation";
    case InstrKind::kRecvGradient:
      return "recv_gradient";
    case InstrKind::kBackward:
      return "backward";
    case InstrKind::kSendGradient:
      return "send_gradient";
    case InstrKind::kDpAllReduce:
      return "dp_all_reduce";
    case InstrKind::kOptimizer:
      return "optimizer";
  }
  return "?";
}

std::vector<StageProgram> build_programs(const PlanSpec& plan) {
  const int p = plan.pipeline, m = plan.num_microbatches;
  std::vector<StageProgram> programs(p);
  for (int s = 0; s < p; ++s) {
    StageProgram& prog = programs[s];
    prog.stage = s;
    auto* out = &prog.instrs;
    if (plan.schedule == ScheduleKind::kGpipe) {
      // All forwards, then all backwards (flushed pipeline).
      for (int mb = 0; mb < m; ++mb) forward(s, p, mb, out);
      for (int mb = 0; mb < m; ++mb) backward(s, p, mb, out);
    } else {
      // 1F1B (PipeDream-Flush): p-1-s warm-up forwards, then one forward and one backward
      // alternately, then the remaining backwards.
      const int warmup = std::min(p - 1 - s, m);
      int next_fwd = 0, next_bwd = 0;
      for (; next_fwd < warmup; ++next_fwd) forward(s, p, next_fwd, out);
      while (next_fwd < m) {
        forward(s, p, next_fwd++, out);
        backward(s, p, next_bwd++, out);
      }
      while (next_bwd < m) backward(s, p, next_bwd++, out);
    }
    if (plan.data > 1) out->push_back({InstrKind::kDpAllReduce, -1});
    out->push_back({InstrKind::kOptimizer, -1});
  }
  return programs;
}

double ideal_bubble_fraction(const PlanSpec& plan) {
  const double p = plan.pipeline, m = plan.num_microbatches;
  return (p - 1) / (m + p - 1);
}

}  // namespace trident
