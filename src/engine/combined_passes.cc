// The combined 1F1B step of overlap_moe_expert_parallel_comm (Megatron-Core
// pipeline_parallel/combined_1f1b.py, models/common/model_chunk_schedule_plan.py): a forward and
// a backward of two micro-batches share the compute stream layer by layer, and each one's
// expert all-to-alls run on the communication stream beside the other's compute. Megatron's
// schedule_layer_1f1b issues, per layer pair, the backward's combine, the forward's attention,
// the forward's dispatch, the backward's MLP, the backward's dispatch, the forward's MLP, the
// forward's combine and the backward's attention: compute alternates backward, forward,
// backward, forward, and every all-to-all starts when the compute before it ends. trident cuts
// each pass at its expert all-to-alls into units and runs them in that order, so a unit waits
// only for its own pass's all-to-all, which ran beside the other pass's unit. Two things of the
// real streams slow it: the all-to-all kernels hold SMs (compute_beside), and a forward
// dispatch that syncs with the host waits for the other pass's all-to-all, which sits before
// it on the one communication stream.
#include <stdexcept>

#include "engine/step_simulation.h"

namespace trident {

void StepSimulation::await_all_to_all(ActorState& a, CombinedSide& s) {
  if (s.acquired) return;
  const double wait = sg4::Engine::get_clock();
  s.done->acquire();
  s.acquired = true;
  a.tl->ep_exposed_s += sg4::Engine::get_clock() - wait;
}

void StepSimulation::combined_unit(ActorState& a, CombinedSide& s) {
  ActorTimeline& tl = *a.tl;
  if (s.comm != nullptr) {
    // What the other pass's compute did not hide of this all-to-all is exposed.
    await_all_to_all(a, s);
    if (Interval* iv = record(a, IntervalKind::kEpComm, s.comm_start,
                              std::max(s.comm_start, *s.finished), s.mb, s.chunk)) {
      iv->op = s.comm->tp_op;
      iv->bytes = s.comm->tp_bytes;
      iv->layer = s.comm->layer;
    }
    fill_after_segment(a, *s.comm, s.fill_buckets, s.fill_experts, nullptr);
    s.comm = nullptr;
  }
  const std::vector<Segment>& segs = s.pass->segments;
  while (s.next < segs.size()) {
    const Segment& seg = segs[s.next++];
    for (const RingStep& step : seg.ring) ring_step(a, step, s.mb, s.chunk, seg.layer);
    if (seg.expert && seg.tp_bytes > 0) {
      compute_beside(a, seg.compute_s);
      tl.compute_s += seg.compute_s + seg.overlap_s;
      // A forward dispatch with a host-device sync (PlanSpec::moe_dispatch_syncs): the host
      // waits until the communication stream reaches it, and the other pass's all-to-all,
      // issued first, runs there before it. Nothing else is launched meanwhile.
      CombinedSide* other = a.beside;
      if (s.kind == IntervalKind::kForward && !seg.combine && sc_.plan.moe_dispatch_syncs() &&
          other != nullptr && other->comm != nullptr) {
        await_all_to_all(a, *other);
      }
      s.comm_start = sg4::Engine::get_clock();
      s.acquired = false;
      s.done = join(a, CollKind::kExpert, seg.tp_op, seg.tp_bytes, /*async=*/true, -1, seg.combine,
                    &s.finished);
      compute_beside(a, seg.overlap_s);  // beside its own all-to-all, as run_segment runs it
      s.comm = &seg;
      return;
    }
    run_segment(a, seg, s.mb, s.chunk, 0);
    fill_after_segment(a, seg, s.fill_buckets, s.fill_experts, nullptr);
  }
  if (s.fill_buckets) maybe_launch_bucket(a, true);
  if (s.fill_experts) maybe_launch_expert_bucket(a, true);
  const bool tp = t_ > 1 && s.pass->collectives > 0;
  if (Interval* iv = record(a, s.kind, s.start, s.mb, s.chunk)) {
    iv->tp = tp ? TpTiming::kSimulated : TpTiming::kNone;
  }
  s.over = true;
}

void StepSimulation::run_combined(ActorState& a, CombinedSide& fwd, CombinedSide& bwd) {
  // Plan checks keep these out (moe_checks.cc); the steady state never holds a chunk's first
  // forward, which waits for this step's parameter gathers.
  if (fuse_tp_ || sharded_params_ || (fwd.mb == 0 && !a.step_gathers.empty())) {
    throw std::logic_error("combined 1F1B step with fused TP passes or parameter gathers");
  }
  if (a.deferred.pending) settle_deferred(a);
  fwd.start = bwd.start = sg4::Engine::get_clock();
  while (!fwd.over || !bwd.over) {
    a.beside = &fwd;
    if (!bwd.over) combined_unit(a, bwd);
    a.beside = &bwd;
    if (!fwd.over) combined_unit(a, fwd);
  }
  a.beside = nullptr;
}

}  // namespace trident
