#include "layout/program.h"

#include <algorithm>

namespace trident {
namespace {

class ProgramBuilder {
 public:
  ProgramBuilder(int stage, int stages, int chunks, std::vector<Instr>* out)
      : s_(stage), p_(stages), v_(chunks), out_(out) {}

  void forward(int mb, int chunk) {
    const int vs = chunk * p_ + s_;
    if (vs > 0) out_->push_back({InstrKind::kRecvActivation, mb, chunk});
    out_->push_back({InstrKind::kForward, mb, chunk});
    if (vs < p_ * v_ - 1) out_->push_back({InstrKind::kSendActivation, mb, chunk});
  }

  void backward(int mb, int chunk) {
    const int vs = chunk * p_ + s_;
    if (vs < p_ * v_ - 1) out_->push_back({InstrKind::kRecvGradient, mb, chunk});
    out_->push_back({InstrKind::kBackward, mb, chunk});
    if (vs > 0) out_->push_back({InstrKind::kSendGradient, mb, chunk});
  }

  // A steady-state pair: forward (fmb, fchunk) then backward (bmb, bchunk), or, combined, both
  // receives, the combined step, both sends (Megatron-Core's combined_1f1b_schedule_for_
  // interleaved_pipelining: forward and backward pre-processing, the merged step, then the
  // post-processing of each).
  void pair(int fmb, int fchunk, int bmb, int bchunk) {
    if (!combined_) {
      forward(fmb, fchunk);
      backward(bmb, bchunk);
      return;
    }
    const int last = p_ * v_ - 1, fvs = fchunk * p_ + s_, bvs = bchunk * p_ + s_;
    if (fvs > 0) out_->push_back({InstrKind::kRecvActivation, fmb, fchunk});
    if (bvs < last) out_->push_back({InstrKind::kRecvGradient, bmb, bchunk});
    out_->push_back({InstrKind::kForward, fmb, fchunk, true});
    out_->push_back({InstrKind::kBackward, bmb, bchunk});
    if (fvs < last) out_->push_back({InstrKind::kSendActivation, fmb, fchunk});
    if (bvs > 0) out_->push_back({InstrKind::kSendGradient, bmb, bchunk});
  }

  void set_combined(bool combined) { combined_ = combined; }

 private:
  int s_, p_, v_;
  bool combined_ = false;
  std::vector<Instr>* out_;
};

// Megatron-LM's interleaved 1F1B (schedules.py): the k-th forward runs chunk (k / p) mod v on
// micro-batch (k / (p v)) p + k mod p; backwards visit chunks in reverse.
// With the combined 1F1B (`combined`) each stage runs one more warm-up forward (Megatron-LM
// schedules.py: num_warmup_microbatches + 1 with overlap_moe_expert_parallel_comm), so that
// every steady-state forward has a backward of an earlier micro-batch to pair with.
void interleaved(int s, int p, int v, int m, bool combined, ProgramBuilder* b) {
  const int total = m * v;
  const auto mb_of = [p, v](int k) { return (k / (p * v)) * p + k % p; };
  const auto fwd_chunk = [p, v](int k) { return (k / p) % v; };
  const auto bwd_chunk = [p, v](int k) { return v - 1 - (k / p) % v; };
  int warmup = m == p ? total : std::min(total, (p - s - 1) * 2 + (v - 1) * p + (combined ? 1 : 0));
  for (int k = 0; k < warmup; ++k) b->forward(mb_of(k), fwd_chunk(k));
  for (int k = 0; k < total - warmup; ++k) {
    b->pair(mb_of(k + warmup), fwd_chunk(k + warmup), mb_of(k), bwd_chunk(k));
  }
  for (int k = total - warmup; k < total; ++k) b->backward(mb_of(k), bwd_chunk(k));
}

}  // namespace

StageChunk next_virtual_stage(int stage, int chunk, int stages) {
  return stage + 1 < stages ? StageChunk{stage + 1, chunk} : StageChunk{0, chunk + 1};
}

StageChunk previous_virtual_stage(int stage, int chunk, int stages) {
  return stage > 0 ? StageChunk{stage - 1, chunk} : StageChunk{stages - 1, chunk - 1};
}

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
    case InstrKind::kDpGradReduce:
      return "dp_grad_reduce";
    case InstrKind::kOptimizer:
      return "optimizer";
    case InstrKind::kDpParamGather:
      return "dp_param_gather";
  }
  return "?";
}

std::vector<StageProgram> build_programs(const PlanSpec& plan) {
  const int p = plan.pipeline, m = plan.num_microbatches;
  const int v = plan.schedule == ScheduleKind::kInterleaved1F1B ? plan.virtual_stages : 1;
  std::vector<StageProgram> programs(p);
  for (int s = 0; s < p; ++s) {
    StageProgram& prog = programs[s];
    prog.stage = s;
    ProgramBuilder b(s, p, v, &prog.instrs);
    const bool combined = plan.overlap_moe_expert_parallel_comm;
    b.set_combined(combined);
    if (plan.schedule == ScheduleKind::kGpipe) {
      for (int mb = 0; mb < m; ++mb) b.forward(mb, 0);
      for (int mb = 0; mb < m; ++mb) b.backward(mb, 0);
    } else if (v > 1) {
      interleaved(s, p, v, m, combined, &b);
    } else {
      // 1F1B (PipeDream-Flush): p-1-s warm-up forwards, then one forward and one backward
      // alternately, then the remaining backwards. Combined (p = 1 only, plan checks): the
      // first forward alone, then each forward with the previous micro-batch's backward
      // (combined_1f1b_schedule_for_no_pipelining).
      const int warmup = std::min(p - 1 - s + (combined ? 1 : 0), m);
      int next_fwd = 0, next_bwd = 0;
      for (; next_fwd < warmup; ++next_fwd) b.forward(next_fwd, 0);
      for (; next_fwd < m; ++next_fwd, ++next_bwd) b.pair(next_fwd, 0, next_bwd, 0);
      while (next_bwd < m) b.backward(next_bwd++, 0);
    }
    if (plan.data_context() > 1) prog.instrs.push_back({InstrKind::kDpGradReduce, -1, 0});
    prog.instrs.push_back({InstrKind::kOptimizer, -1, 0});
    // With overlap_param_gather the gather runs behind the next step's forward, and sharded
    // weights (optim_grads_params) are gathered per layer where they are used.
    if (plan.data_context() > 1 && plan.distributed_optimizer && !plan.overlap_param_gather &&
        !plan.shards_params()) {
      prog.instrs.push_back({InstrKind::kDpParamGather, -1, 0});
    }
  }
  return programs;
}

double ideal_bubble_fraction(const PlanSpec& plan) {
  const double p = plan.pipeline, m = plan.num_microbatches;
  const double v = plan.schedule == ScheduleKind::kInterleaved1F1B ? plan.virtual_stages : 1;
  return (p - 1) / (v * m + p - 1);
}

}  // namespace trident
