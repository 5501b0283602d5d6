#include "engine/simulator.h"

#include <algorithm>
#include <map>
#include <memory>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Semaphore.hpp>
#include <string>
#include <tuple>

#include "core/errors.h"
#include "engine/all_to_all.h"
#include "engine/collective_lowering.h"
#include "engine/fused_passes.h"
#include "engine/phase_runner.h"
#include "platform/platform.h"
#include "schedule/rank_map.h"
#include "workload/moe_ops.h"

namespace sg4 = simgrid::s4u;

namespace trident {
namespace {

// kExpert: a MoE dispatch or combine over the expert-parallel group; kExpertData: the expert
// gradients' reduction (or weight gather) over the expert-data-parallel group.
enum class CollKind { kTensor, kData, kExpert, kExpertData };

// A collective in progress: participants arrive one by one; the last one starts the flows
// (so a collective starts when its slowest member is ready) and, once they are done, releases
// `done` once per participant.
struct ActorState;
struct Rendezvous {
  int arrived = 0;
  sg4::SemaphorePtr done;
  std::vector<ActorState*> members;  // asynchronous (bucket) collectives: who to record it for
};

// One simulated actor: a GPU (full fidelity) or a tensor-parallel group (fast).
struct ActorState {
  ActorTimeline* tl = nullptr;
  int tp = 0, dp = 0, pp = 0;
  int tp_seq = 0, dp_seq = 0;  // collectives issued so far, to match them across actors
  int ep_seq = 0, edp_seq = 0;
  double bucket_params = 0;         // gradients ready but not yet handed to a bucket
  int buckets = 0;                  // buckets launched so far
  bool record_closed_form = false;  // record its fused passes' TP collectives
  std::vector<sg4::SemaphorePtr> pending_buckets;
};

class StepSimulation {
 public:
  StepSimulation(const Scenario& sc, const Workload& w, const std::vector<StageProgram>& programs,
                 const SimOptions& opt)
      : sc_(sc),
        w_(w),
        programs_(programs),
        opt_(opt),
        ranks_(sc.plan, sc.cluster),
        shortcuts_(decide_shortcuts(sc, opt.fidelity)) {
    t_ = sc.plan.tensor;
    d_ = sc.plan.data;
    p_ = sc.plan.pipeline;
    v_ = static_cast<int>(w.stages.front().chunks.size());
    // Every shortcut comes from the one record (decide_shortcuts says where each is exact).
    full_ = !shortcuts_.group_actor.taken;
    lowering_.collapse_steps = shortcuts_.collapsed_steps.taken;
    lowering_.in_switch_efficiency = sc.cluster.nvlink.in_switch_reduction_efficiency;
    fuse_tp_ = shortcuts_.fused_tp.taken;
    one_rank_flows_ = shortcuts_.one_rank_flows.taken;
    one_replica_ = shortcuts_.one_replica.taken;
    replicas_ = shortcuts_.replicas_simulated(sc.plan);
    dp_op_ =
        sc.plan.distributed_optimizer ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce;
    ep_ = sc.model.moe() ? sc.plan.expert_parallel : 1;
    ep_load_ = moe_expert_load(sc.model, sc.plan);
  }

  Timeline run();

 private:
  int actor_id(int tp, int dp, int pp) const {
    return full_ ? (pp * d_ + dp) * t_ + tp : pp * replicas_ + dp;
  }
  // Channel of (receiving actor, chunk); activations and gradients have separate ones.
  int channel(int tp, int dp, int pp, int chunk) const { return actor_id(tp, dp, pp) * v_ + chunk; }
  void actor_main(ActorState& a);
  void run_pass(ActorState& a, const Pass& pass, const FusedPass& fused, IntervalKind kind, int mb,
                int chunk, bool fill_buckets);
  // Records the TP collectives of a fused pass that ran [start, now) where its closed form put
  // them; returns how the pass's TP collectives were run and recorded.
  TpTiming record_fused(ActorState& a, const Pass& pass, const FusedPass& fused, double start,
                        int mb, int chunk);
  void recv(ActorState& a, StageChunk from, const sg4::SemaphorePtr& ready, int mb, int chunk);
  // Joins a collective; returns the semaphore that its completion releases for this actor.
  // `combine`: an expert all-to-all whose busiest member sends most (else receives most).
  sg4::SemaphorePtr join(ActorState& a, CollKind kind, CollectiveOp op, double bytes, bool async,
                         bool combine = false);
  // Runs a collective to completion and records it (a TP one for pass (mb, chunk) and `layer`);
  // returns the time this actor spent in it.
  double collective(ActorState& a, CollKind kind, CollectiveOp op, double bytes, int mb = -1,
                    int chunk = 0, int layer = kLayerUnknown, bool combine = false);
  // Reduces (or, gather, all-gathers) the expert weights' share over the expert-data-parallel
  // group; returns the time spent.
  double expert_data_collective(ActorState& a, bool gather);
  // Hands the gradients gathered so far to an asynchronous DP bucket when the bucket is full
  // (or `flush`).
  void maybe_launch_bucket(ActorState& a, bool flush);
  // Records [start, now) as `kind`; returns the interval, or nullptr when not recording.
  Interval* record(ActorState& a, IntervalKind kind, double start, int mb, int chunk = 0) {
    return record(a, kind, start, sg4::Engine::get_clock(), mb, chunk);
  }
  Interval* record(ActorState& a, IntervalKind kind, double start, double end, int mb, int chunk) {
    if (!opt_.record_intervals) return nullptr;
    Interval iv;
    iv.start = start;
    iv.end = end;
    iv.kind = kind;
    iv.microbatch = mb;
    iv.chunk = static_cast<std::int16_t>(chunk);
    a.tl->intervals.push_back(iv);
    return &a.tl->intervals.back();
  }
  void compute(double seconds) {
    if (seconds <= 0) return;
    ++activities_;
    sg4::this_actor::execute(seconds * host_speed_);
  }
  // Tensor ranks whose pipeline and data-parallel flows this actor simulates: its own, its whole
  // group's, or one standing for all (one_rank_flows_).
  std::vector<int> tensor_ranks(const ActorState& a) const {
    if (full_) return {a.tp};
    if (one_rank_flows_) return {0};
    std::vector<int> all(t_);
    for (int i = 0; i < t_; ++i) all[i] = i;
    return all;
  }

  const Scenario& sc_;
  const Workload& w_;
  const std::vector<StageProgram>& programs_;
  SimOptions opt_;
  RankMap ranks_;
  Shortcuts shortcuts_;
  std::unique_ptr<Platform> platform_;
  int t_ = 1, d_ = 1, p_ = 1, v_ = 1;
  bool full_ = false, fuse_tp_ = false, one_rank_flows_ = false, one_replica_ = false;
  int replicas_ = 1;    // data-parallel replicas simulated
  int ep_ = 1;          // expert-parallel size (1 for dense models)
  double ep_load_ = 1;  // the busiest EP rank's tokens / mean (moe_expert_load)
  CollectiveOp dp_op_ = CollectiveOp::kAllReduce;
  LoweringOptions lowering_;
  double host_speed_ = 0;
  std::uint64_t activities_ = 0;
  int finished_ = 0;
  std::vector<ActorTimeline> timelines_;
  std::vector<ActorState> actors_;
  std::vector<sg4::SemaphorePtr> act_ready_, grad_ready_;  // indexed by channel()
  std::map<std::tuple<int, int, int>, Rendezvous> rendezvous_;
  std::vector<std::vector<FusedPass>> fused_fwd_, fused_bwd_;  // [stage][chunk]
};

sg4::SemaphorePtr StepSimulation::join(ActorState& a, CollKind kind, CollectiveOp op, double bytes,
                                       bool async, bool combine) {
  std::vector<std::vector<int>> groups;
  int participants = 1, group_id = 0, seq = 0;
  if (kind == CollKind::kTensor) {
    groups.push_back(ranks_.tensor_group(a.dp, a.pp));
    participants = full_ ? t_ : 1;
    group_id = a.pp * d_ + a.dp;
    seq = a.tp_seq++;
  } else if (kind == CollKind::kExpert || kind == CollKind::kExpertData) {
    const bool ep = kind == CollKind::kExpert;
    for (int r : tensor_ranks(a)) {
      groups.push_back(ep ? expert_group(ranks_, r, a.dp, a.pp, ep_)
                          : expert_data_group(ranks_, r, a.dp, a.pp, ep_, d_));
    }
    participants = static_cast<int>(groups.front().size());
    const int block = ep ? a.dp / ep_ : a.dp % ep_;
    group_id = (a.pp * d_ + block) * (full_ ? t_ : 1) + (full_ ? a.tp : 0);
    seq = ep ? a.ep_seq++ : a.edp_seq++;
  } else {
    for (int r : tensor_ranks(a)) groups.push_back(ranks_.data_group(r, a.pp));
    participants = replicas_;
    group_id = full_ ? a.pp * t_ + a.tp : a.pp;
    seq = a.dp_seq++;
  }
  const auto key = std::make_tuple(static_cast<int>(kind), group_id, seq);
  Rendezvous& rv = rendezvous_[key];
  if (!rv.done) rv.done = sg4::Semaphore::create(0);
  sg4::SemaphorePtr done = rv.done;
  if (async) rv.members.push_back(&a);
  if (++rv.arrived == participants) {
    std::vector<ActorState*> members = std::move(rv.members);
    rendezvous_.erase(key);
    const auto island_of = [this](int gpu) { return platform_->island_of(gpu); };
    std::vector<Phase> phases;
    if (kind == CollKind::kData && one_replica_) {
      phases = lower_mirrored_ring(op, groups.front().front(), d_, bytes);
    } else if (op == CollectiveOp::kAllToAll) {
      phases = lower_all_to_all(groups, imbalanced_all_to_all_bytes(ep_, bytes, ep_load_, combine));
    } else {
      phases = lower_collective(op, groups, bytes, island_of, lowering_);
    }
    auto drive = [this, phases = std::move(phases), done, participants, members, op, bytes]() {
      const double start = sg4::Engine::get_clock();
      run_phases(*platform_, phases, &activities_);
      // A bucket runs beside its members' compute: record it for the trace, not as exposed.
      for (ActorState* m : members) {
        if (Interval* iv = record(*m, IntervalKind::kDpComm, start, -1)) {
          iv->bucket = m->buckets;
          iv->op = op;
          iv->bytes = bytes;
        }
        m->buckets += 1;
      }
      for (int i = 0; i < participants; ++i) done->release();
    };
    if (async) {
      sg4::Actor::create("collective", sg4::this_actor::get_host(), std::move(drive));
    } else {
      drive();
    }
  }
  return done;
}

double StepSimulation::collective(ActorState& a, CollKind kind, CollectiveOp op, double bytes,
                                  int mb, int chunk, int layer, bool combine) {
  const double start = sg4::Engine::get_clock();
  join(a, kind, op, bytes, /*async=*/false, combine)->acquire();
  const bool tensor = kind == CollKind::kTensor;
  const IntervalKind ik = tensor                      ? IntervalKind::kTpComm
                          : kind == CollKind::kExpert ? IntervalKind::kEpComm
                                                      : IntervalKind::kDpComm;
  if (Interval* iv = record(a, ik, start, mb, chunk)) {
    iv->op = op;
    iv->bytes = bytes;
    iv->layer = layer;
    if (tensor) iv->tp = TpTiming::kSimulated;
  }
  return sg4::Engine::get_clock() - start;
}

TpTiming StepSimulation::record_fused(ActorState& a, const Pass& pass, const FusedPass& fused,
                                      double start, int mb, int chunk) {
  if (fused.collectives.empty()) return TpTiming::kNone;
  if (!opt_.record_intervals || !a.record_closed_form) return TpTiming::kClosedFormUnrecorded;
  append_fused_collectives(pass, fused, start, sg4::Engine::get_clock(), mb, chunk,
                           &a.tl->intervals);
  return TpTiming::kClosedForm;
}

double StepSimulation::expert_data_collective(ActorState& a, bool gather) {
  const StageWork& st = w_.stages[a.pp];
  const double bytes = gather ? st.expert_param_gather_bytes : st.expert_grad_bytes;
  if (bytes <= 0 || d_ / ep_ <= 1) return 0;
  return collective(a, CollKind::kExpertData, gather ? CollectiveOp::kAllGather : dp_op_, bytes);
}

void StepSimulation::maybe_launch_bucket(ActorState& a, bool flush) {
  const StageWork& st = w_.stages[a.pp];
  if (a.bucket_params <= 0 || (!flush && a.bucket_params < st.grad_bucket_params)) return;
  const double bytes =
      a.bucket_params * st.grad_bytes / (st.params_per_gpu - st.expert_params_per_gpu);
  a.bucket_params = 0;
  a.pending_buckets.push_back(join(a, CollKind::kData, dp_op_, bytes, /*async=*/true));
}

void StepSimulation::run_pass(ActorState& a, const Pass& pass, const FusedPass& fused,
                              IntervalKind kind, int mb, int chunk, bool fill_buckets) {
  const double start = sg4::Engine::get_clock();
  ActorTimeline& tl = *a.tl;
  if (fuse_tp_ && !fill_buckets) {
    compute(fused.duration);
    tl.compute_s += pass.compute_s;
    tl.tp_exposed_s += fused.tp_exposed;
    const TpTiming tp = record_fused(a, pass, fused, start, mb, chunk);
    if (Interval* iv = record(a, kind, start, mb, chunk)) iv->tp = tp;
    return;
  }
  double pending = 0;  // closed-form time not yet executed (fused mode)
  for (const Segment& seg : pass.segments) {
    if (fuse_tp_) {
      pending += fuse_segment(seg, t_, sc_.cluster.nvlink, &tl.tp_exposed_s);
      tl.compute_s += seg.compute_s + seg.overlap_s;
    } else {
      compute(seg.compute_s);
      tl.compute_s += seg.compute_s + seg.overlap_s;
      if (seg.tp_bytes <= 0 || (t_ == 1 && !seg.expert)) {
        compute(seg.overlap_s);
      } else {
        // The overlapped compute (a weight-gradient GEMM) runs while the collective is in flight.
        const double comm_start = sg4::Engine::get_clock();
        sg4::ExecPtr overlap;
        if (seg.overlap_s > 0) {
          ++activities_;
          overlap = sg4::this_actor::exec_async(seg.overlap_s * host_speed_);
        }
        collective(a, seg.expert ? CollKind::kExpert : CollKind::kTensor, seg.tp_op, seg.tp_bytes,
                   mb, chunk, seg.layer, seg.combine);
        if (overlap) overlap->wait();
        const double exposed = (sg4::Engine::get_clock() - comm_start) - seg.overlap_s;
        (seg.expert ? tl.ep_exposed_s : tl.tp_exposed_s) += exposed;
      }
    }
    if (fill_buckets && seg.grad_params > 0) {
      a.bucket_params += seg.grad_params;
      if (a.bucket_params >= w_.stages[a.pp].grad_bucket_params) {
        compute(pending);
        pending = 0;
        maybe_launch_bucket(a, false);
      }
    }
  }
  compute(pending);
  if (fill_buckets) maybe_launch_bucket(a, true);
  TpTiming tp = TpTiming::kNone;
  if (fuse_tp_) {
    tp = record_fused(a, pass, fused, start, mb, chunk);
  } else if (t_ > 1 && pass.collectives > 0) {
    tp = TpTiming::kSimulated;
  }
  if (Interval* iv = record(a, kind, start, mb, chunk)) iv->tp = tp;
}

void StepSimulation::recv(ActorState& a, StageChunk from, const sg4::SemaphorePtr& ready, int mb,
                          int chunk) {
  const double start = sg4::Engine::get_clock();
  ready->acquire();  // the neighbour has produced this micro-batch
  const double now = sg4::Engine::get_clock();
  a.tl->pp_wait_s += now - start;
  if (now > start) record(a, IntervalKind::kPpWait, start, mb, chunk);
  // The transfer starts once both sides are ready (rendezvous), one flow per tensor rank.
  std::vector<Flow> flows;
  for (int r : tensor_ranks(a)) {
    flows.push_back(
        {ranks_.gpu(r, a.dp, from.stage), ranks_.gpu(r, a.dp, a.pp), w_.stages[a.pp].p2p_bytes});
  }
  run_flows(*platform_, flows, &activities_);
  a.tl->pp_exposed_s += sg4::Engine::get_clock() - now;
  if (Interval* iv = record(a, IntervalKind::kPpComm, now, mb, chunk)) {
    iv->bytes = w_.stages[a.pp].p2p_bytes;
  }
}

void StepSimulation::actor_main(ActorState& a) {
  const StageWork& work = w_.stages[a.pp];
  const int last_mb = sc_.plan.num_microbatches - 1;
  const bool overlap_dp = sc_.plan.overlap_grad_reduce && d_ > 1;
  for (const Instr& in : programs_[a.pp].instrs) {
    const int c = in.chunk;
    switch (in.kind) {
      case InstrKind::kRecvActivation:
        recv(a, previous_virtual_stage(a.pp, c, p_), act_ready_[channel(a.tp, a.dp, a.pp, c)],
             in.microbatch, c);
        break;
      case InstrKind::kRecvGradient:
        recv(a, next_virtual_stage(a.pp, c, p_), grad_ready_[channel(a.tp, a.dp, a.pp, c)],
             in.microbatch, c);
        break;
      case InstrKind::kSendActivation: {
        const StageChunk to = next_virtual_stage(a.pp, c, p_);
        act_ready_[channel(a.tp, a.dp, to.stage, to.chunk)]->release();
        break;
      }
      case InstrKind::kSendGradient: {
        const StageChunk to = previous_virtual_stage(a.pp, c, p_);
        grad_ready_[channel(a.tp, a.dp, to.stage, to.chunk)]->release();
        break;
      }
      case InstrKind::kForward:
        run_pass(a, work.chunks[c].forward, fused_fwd_[a.pp][c], IntervalKind::kForward,
                 in.microbatch, c, false);
        break;
      case InstrKind::kBackward:
        // A chunk's gradients are final after its last micro-batch's backward.
        run_pass(a, work.chunks[c].backward, fused_bwd_[a.pp][c], IntervalKind::kBackward,
                 in.microbatch, c, overlap_dp && in.microbatch == last_mb);
        break;
      case InstrKind::kDpGradReduce: {
        a.tl->dp_exposed_s += expert_data_collective(a, false);
        if (!overlap_dp) {
          a.tl->dp_exposed_s += collective(a, CollKind::kData, dp_op_, work.grad_bytes);
          break;
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
        const double start = sg4::Engine::get_clock();
        compute(work.optimizer_s);
        a.tl->compute_s += work.optimizer_s;
        record(a, IntervalKind::kOptimizer, start, -1);
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
  platform_ = std::make_unique<Platform>(sc_.cluster, host_speed_, sc_.plan.gpus());

  for (const StageWork& st : w_.stages) {
    fused_fwd_.emplace_back();
    fused_bwd_.emplace_back();
    for (const ChunkWork& ch : st.chunks) {
      fused_fwd_.back().push_back(fuse_pass(ch.forward, t_, sc_.cluster.nvlink));
      fused_bwd_.back().push_back(fuse_pass(ch.backward, t_, sc_.cluster.nvlink));
    }
  }
  const int tensor_actors = full_ ? t_ : 1;
  const int replicas = full_ ? d_ : replicas_;
  const int count = p_ * replicas * tensor_actors;
  // The trace-size budget: the closed-form TP collectives all actors' fused passes would record.
  long closed_form = 0;
  for (int pp = 0; fuse_tp_ && pp < p_; ++pp) {
    closed_form +=
        fused_collectives(programs_[pp], fused_fwd_[pp], fused_bwd_[pp]) * replicas * tensor_actors;
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
      for (int tp = 0; tp < tensor_actors; ++tp) {
        const int id = actor_id(tp, dp, pp);
        ActorTimeline& tl = timelines_[id];
        tl.stage = pp;
        tl.data_rank = dp;
        tl.tensor_rank = full_ ? tp : -1;
        tl.gpus = full_ ? 1 : t_ * (d_ / replicas);
        ActorState& a = actors_[id];
        a.tl = &tl;
        a.tp = tp;
        a.dp = dp;
        a.pp = pp;
        a.record_closed_form = record_all_closed_form || dp == 0;
        sg4::Host* host = platform_->host(ranks_.gpu(tp, dp, pp));
        sg4::Actor::create(
            "s" + std::to_string(pp) + "d" + std::to_string(dp) + "t" + std::to_string(tp), host,
            [this, &a]() { actor_main(a); });
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

}  // namespace

Timeline simulate_step(const Scenario& scenario, const Workload& workload,
                       const std::vector<StageProgram>& programs, const SimOptions& options) {
  StepSimulation sim(scenario, workload, programs, options);
  return sim.run();
}

}  // namespace trident
