// Claimed runs (shortcuts.h: claimed_runs): pipeline transfers and passes of compute and TP
// collectives timed in closed form while their links carry nothing else. An actor lists the
// windows its flows would hold each link, alone, claims them (lowering/link_claims.h) and
// waits once for the whole run; a flow or claim that reaches one of those links before its
// window ends interrupts the wait, and the actor runs what is left as flows from that instant
// (run_phases_from), so that everything from then on shares the links as flows do.
#include <algorithm>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>

#include "engine/phase_runner.h"
#include "engine/step_simulation.h"

namespace trident {

const AloneSchedule* StepSimulation::alone(const std::vector<Phase>& phases) {
  auto it = alone_.find(&phases);
  if (it == alone_.end()) {
    auto s = std::make_unique<AloneSchedule>();
    if (!alone_schedule(*platform_, phases, s.get())) s.reset();
    it = alone_.emplace(&phases, std::move(s)).first;
  }
  return it->second.get();
}

bool StepSimulation::claimable(const Pass& pass) const {
  return std::all_of(pass.segments.begin(), pass.segments.end(), [](const Segment& s) {
    return !s.expert && s.ring.empty() && s.tp_overlap == TpOverlap::kNone;
  });
}

void StepSimulation::run_segment(ActorState& a, const Segment& seg, int mb, int chunk,
                                 double done) {
  ActorTimeline& tl = *a.tl;
  compute_beside(a, seg.compute_s - done);
  tl.compute_s += seg.compute_s + seg.overlap_s;
  if (seg.tp_bytes <= 0 || (t_ == 1 && !seg.expert)) {
    compute_beside(a, seg.overlap_s);
    return;
  }
  // The overlapped compute (a weight-gradient GEMM) runs while the collective is in flight.
  const double comm_start = sg4::Engine::get_clock();
  if (seg.tp_overlap == TpOverlap::kRingExchange || seg.tp_overlap == TpOverlap::kPipeline) {
    overlapped_segment(a, seg, mb, chunk);
  } else {
    sg4::ExecPtr overlap;
    if (seg.overlap_s > 0) {
      ++activities_;
      overlap = sg4::this_actor::exec_async(seg.overlap_s * seg.overlap_stretch * host_speed_);
    }
    collective(a, seg.expert ? CollKind::kExpert : CollKind::kTensor, seg.tp_op, seg.tp_bytes, mb,
               chunk, seg.layer, -1, seg.combine);
    if (overlap) overlap->wait();
  }
  const double exposed = (sg4::Engine::get_clock() - comm_start) - seg.overlap_s;
  (seg.expert ? tl.ep_exposed_s : tl.tp_exposed_s) += exposed;
}

double StepSimulation::run_claimed_pass(ActorState& a, const Pass& pass, int mb, int chunk) {
  ActorTimeline& tl = *a.tl;
  // The steps of a pass are the same each time this actor runs it: built once.
  std::vector<ClaimStep>& steps = a.claim_steps[&pass];
  for (size_t n = steps.empty() ? 0 : pass.segments.size(); n < pass.segments.size(); ++n) {
    const Segment& seg = pass.segments[n];
    ClaimStep st;
    st.seg = &seg;
    st.compute = seg.compute_s;
    if (seg.tp_bytes <= 0 || t_ == 1) {
      st.compute += seg.overlap_s;
    } else {
      const std::vector<std::vector<int>> groups = {ranks_.tensor_group(a.cp, a.dp, a.pp)};
      st.phases = &lowered(a, CollKind::kTensor, seg.tp_op, seg.tp_bytes, -1, false, groups);
      st.alone = alone(*st.phases);
      st.overlap = seg.overlap_s > 0 ? seg.overlap_s * seg.overlap_stretch : 0;
    }
    steps.push_back(st);
  }
  // Real time at alone time x of the last claim (claims that shared its links slowed it).
  const auto real = [&a](double x) { return a.claim.to_real(x); };
  // What a claimed (or run) segment adds to the timeline; its collective ran [from, to), real.
  const auto account = [&](const ClaimStep& st, double from, double to, double end) {
    tl.compute_s += st.seg->compute_s + st.seg->overlap_s;
    if (st.phases == nullptr) return;
    ++a.tp_seq;  // as join() counts it
    tl.tp_exposed_s += (end - from) - st.seg->overlap_s;
    if (Interval* iv = record(a, IntervalKind::kTpComm, from, to, mb, chunk)) {
      iv->op = st.seg->tp_op;
      iv->bytes = st.seg->tp_bytes;
      iv->layer = st.seg->layer;
      iv->tp = TpTiming::kSimulated;
    }
  };
  size_t i = 0;
  double done = 0;  // compute of steps[i] already run
  double pass_start = sg4::Engine::get_clock();
  // A deferred transfer runs first, in the first claim with the steps.
  if (a.deferred.pending && a.deferred.alone == nullptr) {
    settle_deferred(a);
    pass_start = sg4::Engine::get_clock();
  }
  while (i < steps.size()) {
    // The longest run of steps from i whose collectives have a closed form.
    const double now = sg4::Engine::get_clock();
    const bool deferred = a.deferred.pending;
    const double arrival = deferred ? now + a.deferred.alone->duration : now;
    size_t end = i;
    double t = arrival - done;
    std::vector<double>& comm_at = a.comm_at;
    comm_at.clear();
    a.claim.uses.clear();
    a.claim.warps.clear();
    if (deferred) add_claim_windows(*a.deferred.alone, now, &a.claim.uses);
    for (; end < steps.size(); ++end) {
      const ClaimStep& st = steps[end];
      if (st.phases != nullptr && st.alone == nullptr) break;
      t += st.compute;
      comm_at.push_back(t);
      if (st.phases != nullptr) add_claim_windows(*st.alone, t, &a.claim.uses, st.overlap);
      t += st.span();
    }
    const bool claimed =
        end > i && (a.claim.uses.empty() || platform_->claims().try_claim(&a.claim, now));
    if (!claimed) {
      if (deferred) {
        settle_deferred(a);
        pass_start = sg4::Engine::get_clock();
        continue;
      }
      run_segment(a, *steps[i].seg, mb, chunk, done);
      ++i;
      done = 0;
      continue;
    }
    double at = -1;  // when the claim was interrupted
    if (a.claim.uses.empty()) {
      compute(t - now);  // compute only (collectives of no flows: closed-form floors)
    } else {
      at = wait_claim(*platform_, &a.claim, a.wake, t, &activities_);
    }
    if (deferred && at >= 0 && at < arrival) {
      // Interrupted in the transfer: the rest of it as flows, then the pass from its start.
      run_phases_from(*platform_, *a.deferred.phases, *a.deferred.alone, at - now, &activities_,
                      &a.claim);
      finish_deferred(a, sg4::Engine::get_clock());
      pass_start = sg4::Engine::get_clock();
      continue;
    }
    if (deferred) {
      finish_deferred(a, real(arrival));
      pass_start = real(arrival);
    }
    if (at >= 0) {
      // Interrupted in the steps: account for those it finished, then go on from where it
      // stands.
      size_t k = i;
      for (; k < end; ++k) {
        const double cs = comm_at[k - i];
        const ClaimStep& st = steps[k];
        const double ce = cs + st.span();
        if (at < cs) {
          done = st.compute - (cs - at);
          break;
        }
        if (at < ce) {
          // In its collective: what is left of it as flows, beside what is left of the GEMM
          // (which ran in real time from the collective's start: shares slow flows only).
          const double elapsed = at - cs;
          const double gemm_left = st.overlap - (sg4::Engine::get_clock() - real(cs));
          sg4::ExecPtr overlap;
          if (gemm_left > 0) {
            ++activities_;
            overlap = sg4::this_actor::exec_async(gemm_left * host_speed_);
          }
          double comm_end = real(cs + st.comm_s());
          if (elapsed < st.comm_s()) {
            run_phases_from(*platform_, *st.phases, *st.alone, elapsed, &activities_, &a.claim);
            comm_end = sg4::Engine::get_clock();
          }
          if (overlap) overlap->wait();
          account(st, real(cs), comm_end, sg4::Engine::get_clock());
          done = 0;
          ++k;
          break;
        }
        account(st, real(cs), real(cs + st.comm_s()), real(ce));
      }
      i = k;
      continue;
    }
    for (size_t k = i; k < end; ++k) {
      const double cs = comm_at[k - i];
      const ClaimStep& st = steps[k];
      account(st, real(cs), real(cs + st.comm_s()), real(cs + st.span()));
    }
    i = end;
    done = 0;
  }
  if (a.deferred.pending) {  // a pass of no segments
    settle_deferred(a);
    pass_start = sg4::Engine::get_clock();
  }
  return pass_start;
}

std::pair<const std::vector<Phase>*, const AloneSchedule*> StepSimulation::transfer(ActorState& a,
                                                                                    int from) {
  std::vector<Phase>& phases = a.transfers[from];
  if (phases.empty()) {
    phases.resize(1);
    for (int r : tensor_ranks(a)) {
      phases.front().flows.push_back({ranks_.gpu(r, a.cp, a.dp, from),
                                      ranks_.gpu(r, a.cp, a.dp, a.pp), w_.stages[a.pp].p2p_bytes});
    }
  }
  return {&phases, alone(phases)};
}

void StepSimulation::claimed_phases(ActorState& a, const std::vector<Phase>& phases,
                                    const AloneSchedule* alone) {
  const double now = sg4::Engine::get_clock();
  if (claimed_runs_ && alone != nullptr && now + alone->duration == now) return;  // too short
  if (!claimed_runs_ || alone == nullptr ||
      !run_claimed(*platform_, phases, *alone, &a.claim, a.wake, &activities_)) {
    run_phases(*platform_, phases, &activities_);
  }
}

void StepSimulation::finish_deferred(ActorState& a, double end) {
  ActorState::Deferred& d = a.deferred;
  d.pending = false;
  a.tl->pp_exposed_s += end - d.start;
  if (Interval* iv = record(a, IntervalKind::kPpComm, d.start, end, d.mb, d.chunk)) {
    iv->bytes = w_.stages[a.pp].p2p_bytes;
    set_peer(iv, d.from, d.gradient);
  }
}

void StepSimulation::settle_deferred(ActorState& a) {
  claimed_phases(a, *a.deferred.phases, a.deferred.alone);
  finish_deferred(a, sg4::Engine::get_clock());
}

double StepSimulation::deferred_then_compute(ActorState& a, double seconds) {
  const ActorState::Deferred& d = a.deferred;
  const double now = sg4::Engine::get_clock();
  a.claim.uses.clear();
  if (d.alone != nullptr) add_claim_windows(*d.alone, now, &a.claim.uses);
  if (d.alone != nullptr && platform_->claims().try_claim(&a.claim, now)) {
    const double arrival = now + d.alone->duration;
    const double at = wait_claim(*platform_, &a.claim, a.wake, arrival + seconds, &activities_);
    if (at < 0 || at >= arrival) {
      finish_deferred(a, a.claim.to_real(arrival));
      if (at >= 0) compute(arrival + seconds - at);  // only compute was left: no link is used
      return a.claim.to_real(arrival);
    }
    // Interrupted in the transfer: the rest of it as flows, then the compute.
    run_phases_from(*platform_, *d.phases, *d.alone, at - now, &activities_, &a.claim);
    finish_deferred(a, sg4::Engine::get_clock());
  } else {
    settle_deferred(a);
  }
  const double start = sg4::Engine::get_clock();
  compute(seconds);
  return start;
}

}  // namespace trident
