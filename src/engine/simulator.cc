#include "engine/simulator.h"

#include <algorithm>
#include <string>

#include "core/errors.h"
#include "engine/phase_runner.h"
#include "engine/step_simulation.h"
#include "layout/rank_map.h"
#include "lowering/all_to_all.h"
#include "lowering/collective_lowering.h"
#include "lowering/fused_passes.h"
#include "lowering/param_gathers.h"
#include "lowering/straggler_shortcuts.h"
#include "platform/platform.h"
#include "workload/moe_ops.h"
#include "workload/straggler_work.h"

namespace trident {

void StepSimulation::run_pass(ActorState& a, const Pass& pass, const FusedPass& fused,
                              IntervalKind kind, int mb, int chunk, bool fill_buckets) {
  ActorTimeline& tl = *a.tl;
  const bool forward = kind == IntervalKind::kForward;
  const bool ring = pass.ring_steps > 0;
  const bool fill_experts = !forward && fills_expert_buckets(mb);
  const bool step_gathers = forward && mb == 0 && !a.step_gathers.empty();
  // Nothing runs beside the pass: it may run as one closed-form wait (fused) or one claim.
  const bool by_itself =
      !fill_buckets && !fill_experts && !sharded_params_ && !step_gathers && !ring;
  const bool fused_pass = fuse_tp_ && by_itself;
  const bool claimed_pass = claimed_runs_ && !fuse_tp_ && by_itself && claimable(pass);
  // A deferred transfer waits with the pass where the pass is one wait; else it runs first.
  if (a.deferred.pending && !fused_pass && !claimed_pass) settle_deferred(a);
  double start = sg4::Engine::get_clock();
  if (fused_pass) {
    if (a.deferred.pending) {
      start = deferred_then_compute(a, fused.duration);
    } else {
      compute(fused.duration);
    }
    tl.compute_s += pass.compute_s;
    tl.tp_exposed_s += fused.tp_exposed;
    const TpTiming tp = record_fused(a, pass, fused, start, mb, chunk);
    if (Interval* iv = record(a, kind, start, mb, chunk)) iv->tp = tp;
    return;
  }
  if (claimed_pass) {
    start = run_claimed_pass(a, pass, mb, chunk);
    TpTiming tp = t_ > 1 && pass.collectives > 0 ? TpTiming::kSimulated : TpTiming::kNone;
    if (Interval* iv = record(a, kind, start, mb, chunk)) iv->tp = tp;
    return;
  }
  // Parameter gathers this pass waits for: this step's buckets (the first forward of each
  // chunk), or its own per-layer gathers (sharded weights).
  const std::vector<int>* waits = nullptr;
  std::vector<sg4::SemaphorePtr> own;
  const std::vector<sg4::SemaphorePtr>* gathers = &own;
  int own_waited = -1;
  int* waited = &own_waited;
  if (sharded_params_) {
    const GatherSchedule& g = (forward ? layer_fwd_ : layer_bwd_)[a.pp][chunk];
    own = launch_gathers(a, g);
    waits = &g.waits.front();
  } else if (step_gathers) {
    waits = &step_gathers_[a.pp].waits[chunk];
    gathers = &a.step_gathers;
    waited = &a.gathers_waited;
  }
  double pending = 0;  // closed-form time not yet executed (fused mode)
  // Fused passes with a CP ring: each TP collective recorded where it ran.
  const bool record_here = fuse_tp_ && ring && opt_.record_intervals && a.record_closed_form;
  for (size_t i = 0; i < pass.segments.size(); ++i) {
    const Segment& seg = pass.segments[i];
    if (waits != nullptr && (*waits)[i] >= 0) {
      compute(pending);
      pending = 0;
      wait_gathers(a, *gathers, (*waits)[i], waited, mb, chunk);
    }
    if (!seg.ring.empty()) {
      compute(pending);
      pending = 0;
      for (const RingStep& step : seg.ring) ring_step(a, step, mb, chunk, seg.layer);
    }
    if (fuse_tp_) {
      if (record_here && seg.tp_bytes > 0 && t_ > 1) {
        const double at = sg4::Engine::get_clock() + pending + seg.compute_s;
        Interval* iv = record(
            a, IntervalKind::kTpComm, at,
            at + island_collective_time(seg.tp_op, t_, seg.tp_bytes, tp_cluster(a)), mb, chunk);
        iv->tp = TpTiming::kClosedForm;
        iv->op = seg.tp_op;
        iv->bytes = seg.tp_bytes;
        iv->layer = seg.layer;
      }
      pending += fuse_segment(seg, t_, tp_cluster(a), &tl.tp_exposed_s);
      tl.compute_s += seg.compute_s + seg.overlap_s;
    } else {
      run_segment(a, seg, mb, chunk, 0);
    }
    fill_after_segment(a, seg, fill_buckets, fill_experts, &pending);
  }
  compute(pending);
  if (fill_buckets) maybe_launch_bucket(a, true);
  if (fill_experts) maybe_launch_expert_bucket(a, true);
  TpTiming tp = TpTiming::kNone;
  if (fuse_tp_ && ring) {
    tp = fused.collectives.empty() ? TpTiming::kNone
         : record_here             ? TpTiming::kClosedForm
                                   : TpTiming::kClosedFormUnrecorded;
  } else if (fuse_tp_) {
    tp = record_fused(a, pass, fused, start, mb, chunk);
  } else if (t_ > 1 && pass.collectives > 0) {
    tp = TpTiming::kSimulated;
  }
  if (Interval* iv = record(a, kind, start, mb, chunk)) iv->tp = tp;
}

void StepSimulation::fill_after_segment(ActorState& a, const Segment& seg, bool fill_buckets,
                                        bool fill_experts, double* pending) {
  const StageWork& st = w_.stages[a.pp];
  const auto run_pending = [&]() {
    if (pending == nullptr) return;
    compute(*pending);
    *pending = 0;
  };
  if (fill_buckets && seg.grad_params > 0) {
    a.bucket_params += seg.grad_params;
    if (a.bucket_params >= st.grad_bucket_params) {
      run_pending();
      maybe_launch_bucket(a, false);
    }
  }
  if (fill_experts && seg.expert_grad_params > 0) {
    a.expert_bucket_params += seg.expert_grad_params;
    if (a.expert_bucket_params >= st.expert_grad_bucket_params) {
      run_pending();
      maybe_launch_expert_bucket(a, false);
    }
  }
}

void StepSimulation::recv(ActorState& a, StageChunk from, bool gradient,
                          const sg4::SemaphorePtr& ready, int mb, int chunk, bool defer) {
  const double start = sg4::Engine::get_clock();
  ready->acquire();  // the neighbour has produced this micro-batch
  const double now = sg4::Engine::get_clock();
  a.tl->pp_wait_s += now - start;
  if (now > start) {
    if (Interval* iv = record(a, IntervalKind::kPpWait, start, mb, chunk)) {
      set_peer(iv, from, gradient);
    }
  }
  // The transfer starts once both sides are ready (rendezvous), one flow per tensor rank.
  const auto [phases, alone] = transfer(a, from.stage);
  a.deferred = {true, phases, alone, now, mb, chunk, from, gradient};
  if (!defer || !claimed_runs_) settle_deferred(a);
}

void StepSimulation::actor_main(ActorState& a) {
  const Variant& v = variants_[a.variant];
  const StageWork& work = v.work->stages[a.pp];
  const int last_mb = sc_.plan.num_microbatches - 1;
  // overlap_param_gather: the steady state, where the previous step's optimizer launched this
  // step's gathers, bucket by bucket in forward order, behind the forward.
  if (!step_gathers_.empty()) a.step_gathers = launch_gathers(a, step_gathers_[a.pp]);
  const std::vector<Instr>& instrs = programs_[a.pp].instrs;
  for (size_t k = 0; k < instrs.size(); ++k) {
    const Instr& in = instrs[k];
    const int c = in.chunk;
    // Whether the next instruction is the pass that consumes what `in` receives.
    const auto consumed_next = [&](InstrKind pass) {
      return k + 1 < instrs.size() && instrs[k + 1].kind == pass &&
             instrs[k + 1].microbatch == in.microbatch && instrs[k + 1].chunk == c;
    };
    switch (in.kind) {
      case InstrKind::kRecvActivation:
        recv(a, previous_virtual_stage(a.pp, c, p_), false, act_ready_[channel(a, a.pp, c)],
             in.microbatch, c, consumed_next(InstrKind::kForward));
        break;
      case InstrKind::kRecvGradient:
        recv(a, next_virtual_stage(a.pp, c, p_), true, grad_ready_[channel(a, a.pp, c)],
             in.microbatch, c, consumed_next(InstrKind::kBackward));
        break;
      case InstrKind::kSendActivation: {
        const StageChunk to = next_virtual_stage(a.pp, c, p_);
        act_ready_[channel(a, to.stage, to.chunk)]->release();
        break;
      }
      case InstrKind::kSendGradient: {
        const StageChunk to = previous_virtual_stage(a.pp, c, p_);
        grad_ready_[channel(a, to.stage, to.chunk)]->release();
        break;
      }
      case InstrKind::kForward:
        if (in.with_next) {
          // The combined 1F1B: this forward and the backward that follows, as one step.
          const Instr& b = instrs[++k];
          CombinedSide f, bw;
          f.pass = &work.chunks[c].forward;
          f.mb = in.microbatch;
          f.chunk = c;
          bw.pass = &work.chunks[b.chunk].backward;
          bw.kind = IntervalKind::kBackward;
          bw.mb = b.microbatch;
          bw.chunk = b.chunk;
          bw.fill_buckets = async_dp_ && (sharded_grads_ || b.microbatch == last_mb);
          bw.fill_experts = fills_expert_buckets(b.microbatch);
          run_combined(a, f, bw);
          break;
        }
        run_pass(a, work.chunks[c].forward, (*v.fwd)[a.pp][c], IntervalKind::kForward,
                 in.microbatch, c, false);
        break;
      case InstrKind::kBackward:
        // A chunk's gradients are final after its last micro-batch's backward.
        // Sharded gradients are reduce-scattered after every micro-batch's backward.
        run_pass(a, work.chunks[c].backward, (*v.bwd)[a.pp][c], IntervalKind::kBackward,
                 in.microbatch, c, async_dp_ && (sharded_grads_ || in.microbatch == last_mb));
        break;
      case InstrKind::kDpGradReduce: {
        if (!async_experts_) a.tl->dp_exposed_s += expert_data_collective(a, false);
        if (!async_dp_) {
          a.tl->dp_exposed_s += collective(a, CollKind::kData, dp_op_, work.grad_bytes);
          if (a.pending_buckets.empty()) break;  // else expert buckets are still in flight
        }
        const double start = sg4::Engine::get_clock();
        for (const sg4::SemaphorePtr& done : a.pending_buckets) done->acquire();
        a.pending_buckets.clear();
        a.tl->dp_exposed_s += sg4::Engine::get_clock() - start;
        if (Interval* iv = record(a, IntervalKind::kDpComm, start, -1)) {
          iv->op = dp_op_;
          iv->bytes = work.grad_bytes;
          iv->bucket_wait = true;
        }
        break;
      }
      case InstrKind::kOptimizer: {
        // With CPU offload the GPU's share runs inside the host's copies and CPU step
        // (workload/optimizer_offload.h); the waits around it are the host's.
        const OffloadTimes host = offload_times(work.offload, work.optimizer_s);
        const auto wait_host = [&](double seconds) {
          if (seconds <= 0) return;
          const double start = sg4::Engine::get_clock();
          compute(seconds);
          a.tl->offload_exposed_s += seconds;
          if (Interval* iv = record(a, IntervalKind::kHostOptimizer, start, -1)) {
            iv->bytes = work.offload.d2h_bytes + work.offload.h2d_bytes;
          }
        };
        wait_host(host.gpu_start);
        const double start = sg4::Engine::get_clock();
        compute(work.optimizer_s);
        a.tl->compute_s += work.optimizer_s;
        record(a, IntervalKind::kOptimizer, start, -1);
        wait_host(host.end - host.gpu_end);
        break;
      }
      case InstrKind::kDpParamGather:
        a.tl->dp_exposed_s +=
            collective(a, CollKind::kData, CollectiveOp::kAllGather, work.param_gather_bytes);
        a.tl->dp_exposed_s += expert_data_collective(a, true);
        break;
    }
  }
  a.tl->end_s = sg4::Engine::get_clock();
  ++finished_;
}

Timeline StepSimulation::run() {
  int argc = 2;
  char arg0[] = "trident";
  char arg1[] = "--log=root.thres:critical";
  char* argv[] = {arg0, arg1, nullptr};
  sg4::Engine engine(&argc, argv);
  configure_network_model();
  host_speed_ = sc_.cluster.peak(sc_.plan.precision);
  // With replicas standing for others, only the simulated actors' islands are built: every
  // flow runs between their GPUs (or loops back through their NICs).
  std::vector<char> islands_needed;
  if (one_replica_) {
    simulated_gpu_.assign(ranks_.gpus_spanned(), 0);
    islands_needed.assign(ranks_.island_of(ranks_.gpus_spanned() - 1) + 1, 0);
    for (int pp = 0; pp < p_; ++pp) {
      for (int dp = 0; dp < replicas_; ++dp) {
        for (int cp = 0; cp < cp_; ++cp) {
          for (int tp = 0; tp < t_; ++tp) {
            const int gpu = ranks_.gpu(tp, cp, dp, pp);
            simulated_gpu_[gpu] = 1;
            islands_needed[ranks_.island_of(gpu)] = 1;
          }
        }
      }
    }
  }
  platform_ =
      std::make_unique<Platform>(sc_.cluster, host_speed_, ranks_.gpus_spanned(), islands_needed);

  for (const StageWork& st : w_.stages) {
    fused_fwd_.emplace_back();
    fused_bwd_.emplace_back();
    layer_fwd_.emplace_back();
    layer_bwd_.emplace_back();
    for (const ChunkWork& ch : st.chunks) {
      fused_fwd_.back().push_back(fuse_pass(ch.forward, t_, sc_.cluster));
      fused_bwd_.back().push_back(fuse_pass(ch.backward, t_, sc_.cluster));
      layer_fwd_.back().push_back(layer_gathers(ch.forward));
      layer_bwd_.back().push_back(layer_gathers(ch.backward));
    }
    if (sc_.plan.overlap_param_gather && !sharded_params_ && dc_ > 1) {
      step_gathers_.push_back(bucket_gathers(st, st.grad_bucket_params));
    }
  }
  variants_.emplace_back();
  variants_[0].work = &w_;
  variants_[0].fwd = &fused_fwd_;
  variants_[0].bwd = &fused_bwd_;
  // Stragglers: which actors run slow (lowering/straggler_shortcuts.h).
  std::unique_ptr<StragglerActors> stragglers;
  if (has_stragglers(sc_.cluster)) {
    stragglers = std::make_unique<StragglerActors>(sc_, ranks_, shortcuts_);
  }
  const int tensor_actors = full_ ? t_ : 1;
  const int replicas = full_ ? d_ : replicas_;
  const int count = p_ * replicas * cp_ * tensor_actors;
  // The trace-size budget: the closed-form TP collectives all actors' fused passes would record.
  long closed_form = 0;
  for (int pp = 0; fuse_tp_ && pp < p_; ++pp) {
    closed_form += fused_collectives(programs_[pp], fused_fwd_[pp], fused_bwd_[pp]) * replicas *
                   cp_ * tensor_actors;
  }
  const bool record_all_closed_form = closed_form <= opt_.max_closed_form_intervals;
  timelines_.resize(count);
  actors_.resize(count);
  for (int i = 0; i < count * v_; ++i) {
    act_ready_.push_back(sg4::Semaphore::create(0));
    grad_ready_.push_back(sg4::Semaphore::create(0));
  }
  for (int pp = 0; pp < p_; ++pp) {
    for (int dp = 0; dp < replicas; ++dp) {
      for (int cp = 0; cp < cp_; ++cp) {
        for (int tp = 0; tp < tensor_actors; ++tp) {
          const int id = actor_id(tp, cp, dp, pp);
          ActorTimeline& tl = timelines_[id];
          tl.stage = pp;
          tl.data_rank = dp;
          tl.context_rank = cp;
          tl.tensor_rank = full_ ? tp : -1;
          tl.gpus = full_ ? 1 : t_ * (d_ / replicas);
          tl.gpu_ids = full_ ? std::vector<int>{ranks_.gpu(tp, cp, dp, pp)}
                             : ranks_.tensor_group(cp, dp, pp);
          ActorState& a = actors_[id];
          a.tl = &tl;
          a.tp = tp;
          a.cp = cp;
          a.dp = dp;
          a.pp = pp;
          a.record_closed_form = record_all_closed_form || (dp == 0 && cp == 0);
          if (stragglers) {
            a.variant = variant(stragglers->clock_fraction(tp, cp, dp, pp),
                                fuse_tp_ && stragglers->degraded_nvlink(tp, cp, dp, pp));
          }
          a.wake = sg4::Semaphore::create(0);
          a.claim.wake = [&a]() { a.wake->release(); };
          sg4::Host* host = platform_->host(ranks_.gpu(tp, cp, dp, pp));
          const std::string context = cp_ > 1 ? "c" + std::to_string(cp) : "";
          sg4::Actor::create("s" + std::to_string(pp) + "d" + std::to_string(dp) + context + "t" +
                                 std::to_string(tp),
                             host, [this, &a]() { actor_main(a); });
        }
      }
    }
  }
  engine.run();

  if (finished_ != count || !rendezvous_.empty()) {
    throw SimulationError("simulation deadlocked: " + std::to_string(count - finished_) + " of " +
                          std::to_string(count) + " actors never finished their program");
  }
  Timeline out;
  out.shortcuts = shortcuts_;
  for (const ActorTimeline& tl : timelines_) out.step_time_s = std::max(out.step_time_s, tl.end_s);
  out.activities = activities_;
  out.actors = std::move(timelines_);
  return out;
}

int StepSimulation::variant(double clock, bool degraded_nvlink) {
  for (size_t i = 0; i < variants_.size(); ++i) {
    if (variants_[i].clock == clock && variants_[i].degraded_nvlink == degraded_nvlink) {
      return static_cast<int>(i);
    }
  }
  Variant v;
  v.clock = clock;
  v.degraded_nvlink = degraded_nvlink;
  v.work = &w_;
  if (clock < 1) {
    v.own = std::make_unique<Workload>(throttled_workload(w_, clock));
    v.work = v.own.get();
  }
  v.cluster = sc_.cluster;
  if (degraded_nvlink) v.cluster.nvlink.bandwidth *= sc_.cluster.stragglers.nvlink_fraction;
  for (const StageWork& st : v.work->stages) {
    v.own_fwd.emplace_back();
    v.own_bwd.emplace_back();
    for (const ChunkWork& ch : st.chunks) {
      v.own_fwd.back().push_back(fuse_pass(ch.forward, t_, v.cluster));
      v.own_bwd.back().push_back(fuse_pass(ch.backward, t_, v.cluster));
    }
  }
  variants_.push_back(std::move(v));
  Variant& added = variants_.back();
  added.fwd = &added.own_fwd;
  added.bwd = &added.own_bwd;
  return static_cast<int>(variants_.size()) - 1;
}

Timeline simulate_step(const Scenario& scenario, const Workload& workload,
                       const std::vector<StageProgram>& programs, const SimOptions& options) {
  StepSimulation sim(scenario, workload, programs, options);
  return sim.run();
}

}  // namespace trident
