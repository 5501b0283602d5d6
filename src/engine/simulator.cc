#include "engine/simulator.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Semaphore.hpp>
#include <string>
#include <tuple>

#include "core/errors.h"
#include "engine/collective_lowering.h"
#include "engine/phase_runner.h"
#include "platform/platform.h"
#include "schedule/rank_map.h"

namespace sg4 = simgrid::s4u;

namespace trident {
namespace {

enum class CollKind { kTensor, kData };

// A collective in progress: participants arrive one by one; the last one drives the flows and
// then wakes the others, so a collective starts when its slowest member is ready.
struct Rendezvous {
  int arrived = 0;
  sg4::SemaphorePtr done;
};

// One simulated actor: a GPU (full fidelity) or a tensor-parallel group (fast).
struct ActorState {
  ActorTimeline* tl = nullptr;
  int tp = 0, dp = 0, pp = 0;
  int tp_seq = 0, dp_seq = 0;  // collectives issued so far, to match them across actors
};

class StepSimulation {
 public:
  StepSimulation(const Scenario& sc, const Workload& w, const std::vector<StageProgram>& programs,
                 const SimOptions& opt)
      : sc_(sc), w_(w), programs_(programs), opt_(opt), ranks_(sc.plan, sc.cluster) {
    t_ = sc.plan.tensor;
    d_ = sc.plan.data;
    p_ = sc.plan.pipeline;
    full_ = opt.fidelity == Fidelity::kFull;
    lowering_.collapse_steps = !full_;
    // Closed-form TP only where it is exact: TP groups alone on their NVLink links.
    fuse_tp_ = !full_ && (t_ == 1 || ranks_.tensor_traffic_isolated());
  }

  Timeline run();

 private:
  int actor_id(int tp, int dp, int pp) const {
    return full_ ? (pp * d_ + dp) * t_ + tp : pp * d_ + dp;
  }
  void actor_main(ActorState& a);
  void run_pass(ActorState& a, const Pass& pass, const FusedPass& fused, IntervalKind kind, int mb);
  void recv(ActorState& a, int from_pp, const sg4::SemaphorePtr& channel, int mb);
  // Runs (or joins) a collective; returns the time this actor spent in it.
  double collective(ActorState& a, CollKind kind, double bytes);
  // Records [start, now) as `kind`; returns the interval to add details to, or nullptr when
  // intervals are not recorded.
  Interval* record(ActorState& a, IntervalKind kind, double start, int mb) {
    if (!opt_.record_intervals) return nullptr;
    Interval iv;
    iv.start = start;
    iv.end = sg4::Engine::get_clock();
    iv.kind = kind;
    iv.microbatch = mb;
    a.tl->intervals.push_back(iv);
    return &a.tl->intervals.back();
  }
  void compute(double seconds) {
    if (seconds <= 0) return;
    ++activities_;
    sg4::this_actor::execute(seconds * host_speed_);
  }
  // Tensor ranks whose bytes this actor moves: its own, or its whole group's.
  std::vector<int> tensor_ranks(const ActorState& a) const {
    if (full_) return {a.tp};
    std::vector<int> all(t_);
    for (int i = 0; i < t_; ++i) all[i] = i;
    return all;
  }

  const Scenario& sc_;
  const Workload& w_;
  const std::vector<StageProgram>& programs_;
  SimOptions opt_;
  RankMap ranks_;
  std::unique_ptr<Platform> platform_;
  int t_ = 1, d_ = 1, p_ = 1;
  bool full_ = false, fuse_tp_ = false;
  LoweringOptions lowering_;
  double host_speed_ = 0;
  std::uint64_t activities_ = 0;
  int finished_ = 0;
  std::vector<ActorTimeline> timelines_;
  std::vector<ActorState> actors_;
  std::vector<sg4::SemaphorePtr> act_channel_, grad_channel_;  // indexed by receiving actor
  std::map<std::tuple<int, int, int>, Rendezvous> rendezvous_;
  std::vector<FusedPass> fused_fwd_, fused_bwd_;
};

double StepSimulation::collective(ActorState& a, CollKind kind, double bytes) {
  const double start = sg4::Engine::get_clock();
  std::vector<std::vector<int>> groups;
  int participants = 1, group_id = 0, seq = 0;
  if (kind == CollKind::kTensor) {
    groups.push_back(ranks_.tensor_group(a.dp, a.pp));
    participants = full_ ? t_ : 1;
    group_id = a.pp * d_ + a.dp;
    seq = a.tp_seq++;
  } else {
    for (int r : tensor_ranks(a)) groups.push_back(ranks_.data_group(r, a.pp));
    participants = d_;
    group_id = full_ ? a.pp * t_ + a.tp : a.pp;
    seq = a.dp_seq++;
  }
  const auto key = std::make_tuple(static_cast<int>(kind), group_id, seq);
  Rendezvous& rv = rendezvous_[key];
  if (!rv.done) rv.done = sg4::Semaphore::create(0);
  sg4::SemaphorePtr done = rv.done;
  if (++rv.arrived < participants) {
    done->acquire();
  } else {
    rendezvous_.erase(key);
    const auto island_of = [this](int gpu) { return platform_->island_of(gpu); };
    run_phases(*platform_,
               lower_collective(CollectiveOp::kAllReduce, groups, bytes, island_of, lowering_),
               &activities_);
    for (int i = 1; i < participants; ++i) done->release();
  }
  if (Interval* iv = record(a, kind == CollKind::kTensor ? IntervalKind::kTpComm
                                                         : IntervalKind::kDpComm,
                            start, -1)) {
    iv->bytes = bytes;
  }
  return sg4::Engine::get_clock() - start;
}

void StepSimulation::run_pass(ActorState& a, const Pass& pass, const FusedPass& fused,
                              IntervalKind kind, int mb) {
  const double start = sg4::Engine::get_clock();
  ActorTimeline& tl = *a.tl;
  if (fuse_tp_) {
    compute(fused.duration);
    tl.compute_s += pass.compute_s;
    tl.tp_exposed_s += fused.tp_exposed;
    record(a, kind, start, mb);
    return;
  }
  for (const Segment& seg : pass.segments) {
    compute(seg.compute_s);
    tl.compute_s += seg.compute_s + seg.overlap_s;
    if (seg.tp_bytes <= 0 || t_ == 1) {
      compute(seg.overlap_s);
      continue;
    }
    // The overlapped compute (a weight-gradient GEMM) runs while the all-reduce is in flight.
    const double comm_start = sg4::Engine::get_clock();
    sg4::ExecPtr overlap;
    if (seg.overlap_s > 0) {
      ++activities_;
      overlap = sg4::this_actor::exec_async(seg.overlap_s * host_speed_);
    }
    collective(a, CollKind::kTensor, seg.tp_bytes);
    if (overlap) overlap->wait();
    tl.tp_exposed_s += (sg4::Engine::get_clock() - comm_start) - seg.overlap_s;
  }
  record(a, kind, start, mb);
}

void StepSimulation::recv(ActorState& a, int from_pp, const sg4::SemaphorePtr& channel, int mb) {
  const double start = sg4::Engine::get_clock();
  channel->acquire();  // the neighbour has produced this micro-batch
  const double ready = sg4::Engine::get_clock();
  a.tl->pp_wait_s += ready - start;
  if (ready > start) {
    if (Interval* iv = record(a, IntervalKind::kPpWait, start, mb)) iv->peer_stage = from_pp;
  }
  // The transfer starts once both sides are ready (rendezvous), one flow per tensor rank.
  const double bytes = w_.stages[a.pp].p2p_bytes;
  std::vector<Flow> flows;
  for (int r : tensor_ranks(a))
    flows.push_back({ranks_.gpu(r, a.dp, from_pp), ranks_.gpu(r, a.dp, a.pp), bytes});
  run_flows(*platform_, flows, &activities_);
  a.tl->pp_exposed_s += sg4::Engine::get_clock() - ready;
  if (Interval* iv = record(a, IntervalKind::kPpComm, ready, mb)) {
    iv->peer_stage = from_pp;
    iv->bytes = bytes;
  }
}

void StepSimulation::actor_main(ActorState& a) {
  const StageWork& work = w_.stages[a.pp];
  for (const Instr& in : programs_[a.pp].instrs) {
    switch (in.kind) {
      case InstrKind::kRecvActivation:
        recv(a, a.pp - 1, act_channel_[actor_id(a.tp, a.dp, a.pp)], in.microbatch);
        break;
      case InstrKind::kRecvGradient:
        recv(a, a.pp + 1, grad_channel_[actor_id(a.tp, a.dp, a.pp)], in.microbatch);
        break;
      case InstrKind::kSendActivation:
        act_channel_[actor_id(a.tp, a.dp, a.pp + 1)]->release();
        break;
      case InstrKind::kSendGradient:
        grad_channel_[actor_id(a.tp, a.dp, a.pp - 1)]->release();
        break;
      case InstrKind::kForward:
        run_pass(a, work.forward, fused_fwd_[a.pp], IntervalKind::kForward, in.microbatch);
        break;
      case InstrKind::kBackward:
        run_pass(a, work.backward, fused_bwd_[a.pp], IntervalKind::kBackward, in.microbatch);
        break;
      case InstrKind::kDpAllReduce:
        a.tl->dp_exposed_s += collective(a, CollKind::kData, work.grad_bytes);
        break;
      case InstrKind::kOptimizer: {
        const double start = sg4::Engine::get_clock();
        compute(work.optimizer_s);
        a.tl->compute_s += work.optimizer_s;
        record(a, IntervalKind::kOptimizer, start, -1);
        break;
      }
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
  const int gpus = sc_.plan.gpus();
  host_speed_ = sc_.cluster.peak(sc_.plan.precision);
  platform_ = std::make_unique<Platform>(sc_.cluster, host_speed_, gpus);

  for (const StageWork& st : w_.stages) {
    fused_fwd_.push_back(fuse_pass(st.forward, t_, sc_.cluster.nvlink));
    fused_bwd_.push_back(fuse_pass(st.backward, t_, sc_.cluster.nvlink));
  }
  const int tensor_actors = full_ ? t_ : 1;
  const int count = p_ * d_ * tensor_actors;
  timelines_.resize(count);
  actors_.resize(count);
  for (int i = 0; i < count; ++i) {
    act_channel_.push_back(sg4::Semaphore::create(0));
    grad_channel_.push_back(sg4::Semaphore::create(0));
  }
  for (int pp = 0; pp < p_; ++pp) {
    for (int dp = 0; dp < d_; ++dp) {
      for (int tp = 0; tp < tensor_actors; ++tp) {
        const int id = actor_id(tp, dp, pp);
        ActorTimeline& tl = timelines_[id];
        tl.stage = pp;
        tl.data_rank = dp;
        tl.tensor_rank = full_ ? tp : -1;
        tl.gpus = full_ ? 1 : t_;
        ActorState& a = actors_[id];
        a.tl = &tl;
        a.tp = tp;
        a.dp = dp;
        a.pp = pp;
        sg4::Host* host = platform_->host(ranks_.gpu(tp, dp, pp));
        sg4::Actor::create(
            "s" + std::to_string(pp) + "d" + std::to_string(dp) + "t" + std::to_string(tp), host,
            [this, &a]() { actor_main(a); });
      }
    }
  }
  engine.run();

  Timeline out;
  if (finished_ != count || !rendezvous_.empty()) {
    throw SimulationError("simulation deadlocked: " + std::to_string(count - finished_) + " of " +
                          std::to_string(count) + " actors never finished their program");
  }
  for (const ActorTimeline& tl : timelines_) out.step_time_s = std::max(out.step_time_s, tl.end_s);
  out.activities = activities_;
  out.actors = std::move(timelines_);
  return out;
}

}  // namespace

const char* fidelity_name(Fidelity f) { return f == Fidelity::kFull ? "full" : "fast"; }

bool parse_fidelity(const std::string& name, Fidelity* out) {
  if (name == "fast") {
    *out = Fidelity::kFast;
  } else if (name == "full") {
    *out = Fidelity::kFull;
  } else {
    return false;
  }
  return true;
}

Timeline simulate_step(const Scenario& scenario, const Workload& workload,
                       const std::vector<StageProgram>& programs, const SimOptions& options) {
  StepSimulation sim(scenario, workload, programs, options);
  return sim.run();
}

}  // namespace trident
