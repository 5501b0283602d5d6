// The step simulation's actors and their state (engine-internal; SimGrid). simulator.cc runs
// the programs; step_collectives.cc joins and runs the collectives and context-parallel ring
// steps they meet.
#ifndef TRIDENT_ENGINE_STEP_SIMULATION_H_
#define TRIDENT_ENGINE_STEP_SIMULATION_H_

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Semaphore.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "engine/phase_runner.h"
#include "engine/simulator.h"
#include "layout/expert_ranks.h"
#include "layout/rank_map.h"
#include "lowering/collective_lowering.h"
#include "lowering/fused_passes.h"
#include "lowering/param_gathers.h"
#include "platform/platform.h"
#include "workload/expert_routing.h"
#include "workload/moe_ops.h"
#include "workload/tp_overlap.h"

namespace trident {

namespace sg4 = simgrid::s4u;

// kGather: parameter all-gathers over the data-parallel group, matched on their own sequence
// (they run from a helper actor beside the actor's other data-parallel collectives). kContext:
// a context-parallel ring step. kExpert: a MoE dispatch or combine over the expert-parallel
// group; kExpertData: the expert gradients' reduction (or weight gather) over the
// expert-data-parallel group; kExpertGather: a per-layer gather of sharded expert weights over
// it, from the helper actor that runs kGather (matched on its own sequence).
enum class CollKind { kTensor, kData, kGather, kContext, kExpert, kExpertData, kExpertGather };

// A collective in progress: participants arrive one by one; the last one starts the flows
// (so a collective starts when its slowest member is ready) and, once they are done, releases
// `done` once per participant.
struct ActorState;
struct Rendezvous {
  int arrived = 0;
  sg4::SemaphorePtr done;
  std::vector<ActorState*> members;  // asynchronous (bucket) collectives: who to record it for
  std::shared_ptr<double> finished;  // asynchronous expert all-to-alls: when it ended
};

// One segment of a pass run as a claim (engine/claimed_runs.cc): compute, then its TP
// collective beside `overlap` seconds of compute (a weight-gradient GEMM).
struct ClaimStep {
  const Segment* seg = nullptr;
  double compute = 0;
  const std::vector<Phase>* phases = nullptr;  // null: no collective
  const AloneSchedule* alone = nullptr;        // null with phases: its flows share links
  double overlap = 0;
  // How long its collective takes, alone.
  double comm_s() const { return phases != nullptr && alone != nullptr ? alone->duration : 0; }
  // How long its collective and GEMM take, alone.
  double span() const { return phases == nullptr ? 0 : std::max(comm_s(), overlap); }
};

// One pass of a combined forward-backward step in progress (engine/combined_passes.cc): the
// next segment to run, and the expert all-to-all it left in flight.
struct CombinedSide {
  const Pass* pass = nullptr;
  IntervalKind kind = IntervalKind::kForward;
  int mb = 0, chunk = 0;
  bool fill_buckets = false, fill_experts = false;
  size_t next = 0;  // next segment of pass->segments
  double start = 0;
  bool over = false;
  const Segment* comm = nullptr;  // its collective is in flight
  bool acquired = false;          // done was taken already (compute_beside saw it end)
  sg4::SemaphorePtr done;
  std::shared_ptr<double> finished;  // when it ended (set by the collective's driver)
  double comm_start = 0;
};

// One simulated actor: a GPU (full fidelity) or a tensor-parallel group (fast).
struct ActorState {
  ActorTimeline* tl = nullptr;
  int tp = 0, cp = 0, dp = 0, pp = 0;
  int tp_seq = 0, dp_seq = 0, cp_seq = 0;  // collectives issued so far, to match them across actors
  int gather_seq = 0;
  int ep_seq = 0, edp_seq = 0, expert_gather_seq = 0;
  double bucket_params = 0;         // gradients ready but not yet handed to a bucket
  double expert_bucket_params = 0;  // expert gradients likewise (their own buckets)
  int buckets = 0;                  // buckets launched so far
  bool record_closed_form = false;  // record its fused passes' TP collectives
  std::vector<sg4::SemaphorePtr> pending_buckets;
  sg4::SemaphorePtr last_expert_bucket;         // sharded gradients: the expert bucket queued last
  std::vector<sg4::SemaphorePtr> step_gathers;  // overlap_param_gather: this step's buckets
  int gathers_waited = -1;                      // the last of them this actor waited for
  // Closed-form runs of flows (shortcuts.h: claimed_runs): the links they hold, and the
  // semaphore an interruption releases.
  Claim claim;
  sg4::SemaphorePtr wake;
  std::map<const Pass*, std::vector<ClaimStep>> claim_steps;  // by pass, built on first use
  std::vector<double>
      comm_at;  // run_claimed_pass's scratch: when each claimed step's collective starts
  // A pipeline transfer whose flows wait with the pass that follows it, in one claim: it
  // arrived (both sides ready) at `start`; its flows, alone, are `transfer` (transfers).
  struct Deferred {
    bool pending = false;
    const std::vector<Phase>* phases = nullptr;
    const AloneSchedule* alone = nullptr;
    double start = 0;
    int mb = 0, chunk = 0;
    StageChunk from;  // the sending virtual stage
    bool gradient = false;
  } deferred;
  // Pipeline transfers to this actor by sending stage: one phase of a flow per tensor rank.
  std::map<int, std::vector<Phase>> transfers;
  // In a combined step (engine/combined_passes.cc): the other pass, whose all-to-all may be in
  // flight beside this actor's compute.
  CombinedSide* beside = nullptr;
  // What it runs: StepSimulation::variants_[variant] (0: the nominal work; others a
  // straggler's, cluster.stragglers).
  int variant = 0;
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
        experts_(ranks_, sc.plan),
        shortcuts_(decide_shortcuts(sc, opt.fidelity)) {
    t_ = sc.plan.tensor;
    d_ = sc.plan.data;
    cp_ = sc.plan.context;
    dc_ = d_ * cp_;
    p_ = sc.plan.pipeline;
    v_ = static_cast<int>(w.stages.front().chunks.size());
    // Every shortcut comes from the one record (decide_shortcuts says where each is exact).
    full_ = !shortcuts_.group_actor.taken;
    lowering_.collapse_steps = shortcuts_.collapsed_steps.taken;
    lowering_.cluster = &sc.cluster;
    fuse_tp_ = shortcuts_.fused_tp.taken;
    one_rank_flows_ = shortcuts_.one_rank_flows.taken;
    one_replica_ = shortcuts_.one_replica.taken;
    nic_a2a_ = shortcuts_.nic_all_to_all.taken;
    collapsed_flex_ = shortcuts_.collapsed_flex.taken;
    replicas_ = shortcuts_.replicas_simulated(sc.plan);
    mirrored_tp_ = shortcuts_.mirrored_tp.taken;
    claimed_runs_ = shortcuts_.claimed_runs.taken;
    island_replicas_ = one_replica_ && !ranks_.data_groups_one_per_island();
    dp_op_ =
        sc.plan.distributed_optimizer ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce;
    sharded_grads_ = sc.plan.shards_gradients() && dc_ > 1;
    async_dp_ = (sc.plan.overlap_grad_reduce && dc_ > 1) || sharded_grads_;
    // Experts reduce apart over the expert-data-parallel group: with sharded gradients every
    // micro-batch's buckets, with sharded weights gathered per layer (lowering/param_gathers.h).
    const bool edp = experts_.expert_data_parallel() > 1;
    sharded_expert_grads_ = sc.plan.shards_gradients() && edp;
    sharded_params_ = sc.plan.shards_params() && (dc_ > 1 || edp);
    async_experts_ = (async_dp_ || sharded_expert_grads_) && edp;
    ep_ = sc.model.moe() ? sc.plan.expert_parallel : 1;
    ep_load_ = moe_expert_load(sc.model, sc.plan);
    flex_ = sc.model.moe() && sc.plan.moe_dispatcher == MoeDispatcher::kFlex;
    routing_ = expert_routing(sc.model);
    a2a_stretch_ = moe_all_to_all_compute_stretch(
        sc.plan, streaming_multiprocessors(sc.cluster.gpu.architecture));
  }

  Timeline run();

 private:
  // Every context rank of a simulated replica is an actor (the CP ring runs between them).
  int actor_id(int tp, int cp, int dp, int pp) const {
    return full_ ? ((pp * d_ + dp) * cp_ + cp) * t_ + tp : (pp * replicas_ + dp) * cp_ + cp;
  }
  // Channel of (receiving actor, chunk); activations and gradients have separate ones.
  int channel(const ActorState& a, int pp, int chunk) const {
    return actor_id(a.tp, a.cp, a.dp, pp) * v_ + chunk;
  }
  void actor_main(ActorState& a);
  // Returns the index in variants_ of the work an actor at `clock` (fraction of nominal), its TP
  // group holding the degraded NVLink or not, runs; adds it on first use.
  int variant(double clock, bool degraded_nvlink);
  // The cluster a's TP collectives are timed on in closed form.
  const ClusterSpec& tp_cluster(const ActorState& a) const {
    return a.variant == 0 ? sc_.cluster : variants_[a.variant].cluster;
  }
  void run_pass(ActorState& a, const Pass& pass, const FusedPass& fused, IntervalKind kind, int mb,
                int chunk, bool fill_buckets);
  // Runs a forward and a backward pass as one combined step (overlap_moe_expert_parallel_comm;
  // engine/combined_passes.cc): their compute on the one stream, alternately from the backward
  // and the forward up to the next expert all-to-all, each all-to-all in flight beside the
  // other pass's compute (Megatron-Core's schedule_layer_1f1b). Requires expert parallelism
  // (no fused TP passes) and no per-layer weight gathers.
  void run_combined(ActorState& a, CombinedSide& fwd, CombinedSide& bwd);
  // Waits for the side's all-to-all in flight, then runs its segments up to the next expert
  // all-to-all, which it leaves in flight; closes the pass at its end.
  void combined_unit(ActorState& a, CombinedSide& s);
  // Waits for the all-to-all `s` left in flight (unless already taken), counting the wait as
  // exposed EP time of a.
  void await_all_to_all(ActorState& a, CombinedSide& s);
  // A backward pass's gradients after segment `seg`: adds them to the buckets and launches a
  // bucket that is full, first running `pending` seconds of compute (if given) and zeroing it.
  void fill_after_segment(ActorState& a, const Segment& seg, bool fill_buckets, bool fill_experts,
                          double* pending);
  // Runs one context-parallel ring step: its attention block beside the transfer to the next
  // CP rank (a rendezvous of the CP group); records the transfer and what the block did not
  // hide of it.
  void ring_step(ActorState& a, const RingStep& step, int mb, int chunk, int layer);
  // Records the TP collectives of a fused pass that ran [start, now) where its closed form put
  // them; returns how the pass's TP collectives were run and recorded.
  TpTiming record_fused(ActorState& a, const Pass& pass, const FusedPass& fused, double start,
                        int mb, int chunk);
  // `defer`: the pass that consumes the transfer comes next; with claimed runs the transfer's
  // flows may then wait with it (ActorState::deferred).
  // `gradient`: what arrives is the activation gradient from `from` (else its activations).
  void recv(ActorState& a, StageChunk from, bool gradient, const sg4::SemaphorePtr& ready, int mb,
            int chunk, bool defer);
  // Records on `iv` (a kPpWait or kPpComm interval) the neighbour it waited for.
  static void set_peer(Interval* iv, StageChunk from, bool gradient) {
    iv->peer_stage = static_cast<std::int16_t>(from.stage);
    iv->peer_chunk = static_cast<std::int16_t>(from.chunk);
    iv->gradient = gradient;
  }
  // Runs a deferred transfer on its own (as a claim or flows) and records it.
  void settle_deferred(ActorState& a);
  // Records the deferred transfer as having run [its start, end) and clears it.
  void finish_deferred(ActorState& a, double end);
  // Runs the deferred transfer and then `seconds` of compute, as one claim when its links are
  // free; returns when the compute started.
  double deferred_then_compute(ActorState& a, double seconds);
  // Runs segment `seg` of a pass with its collective as flows, `done` seconds of its compute
  // already run.
  void run_segment(ActorState& a, const Segment& seg, int mb, int chunk, double done);
  // Whether run_claimed_pass may run `pass` (segments of compute and TP collectives only).
  bool claimable(const Pass& pass) const;
  // Runs the segments of `pass` (claimable) as claims (engine/claimed_runs.cc): as many as
  // find their links free in one closed-form wait, the others, and what an interruption leaves,
  // as run_segment does.
  // Returns when the pass started (after a deferred transfer, which it runs first).
  double run_claimed_pass(ActorState& a, const Pass& pass, int mb, int chunk);
  // Returns the phases and alone schedule (null: not timable alone) of a pipeline transfer from
  // stage `from` to this actor, one flow per tensor rank it simulates (cached).
  std::pair<const std::vector<Phase>*, const AloneSchedule*> transfer(ActorState& a, int from);
  // Runs `phases` (alone: their schedule, or null) as a claim when their links are free, else
  // as flows.
  void claimed_phases(ActorState& a, const std::vector<Phase>& phases, const AloneSchedule* alone);
  // Returns the phases of a collective as this actor lowers it (cached for the step).
  const std::vector<Phase>& lowered(ActorState& a, CollKind kind, CollectiveOp op, double bytes,
                                    int step, bool combine,
                                    const std::vector<std::vector<int>>& groups);
  // Returns the alone schedule of `phases` (from lowered()), or null when its flows share
  // links (cached).
  const AloneSchedule* alone(const std::vector<Phase>& phases);
  // Joins a collective; returns the semaphore that its completion releases for this actor, or
  // null when it ran at once (a synchronous collective of one participant).
  // `step` >= 0: only that ring step of the collective (a TP ring exchange). `combine`: an
  // expert all-to-all whose busiest member sends most (else receives most).
  // Returns how many simulated actors (replicas_ of them) meet in the expert (data: expert-data)
  // collective with join id `id` (ExpertRanks::join); with one_replica_ only.
  int simulated_expert_participants(bool data, int id) const;
  // `finished` (asynchronous expert all-to-alls): set to a cell that holds when it ended.
  sg4::SemaphorePtr join(ActorState& a, CollKind kind, CollectiveOp op, double bytes, bool async,
                         int step = -1, bool combine = false,
                         std::shared_ptr<double>* finished = nullptr);
  // Waits for a collective join() returned.
  static void await(const sg4::SemaphorePtr& done) {
    if (done) done->acquire();
  }
  // Runs a collective to completion and records it (a TP one for pass (mb, chunk) and `layer`);
  // returns the time this actor spent in it.
  double collective(ActorState& a, CollKind kind, CollectiveOp op, double bytes, int mb = -1,
                    int chunk = 0, int layer = kLayerUnknown, int step = -1, bool combine = false);
  // Reduces (or, gather, all-gathers) the expert weights' share over the expert-data-parallel
  // group; returns the time spent.
  double expert_data_collective(ActorState& a, bool gather);
  // Runs the collective of a tp_comm_overlap segment in its chunks beside the GEMM's chunks
  // (workload/tp_overlap.h gives the same schedule in closed form).
  void overlapped_segment(ActorState& a, const Segment& seg, int mb, int chunk);
  // Starts a helper actor that all-gathers the units of `g` (parameters each) one after another
  // over a's data-parallel group (expert units over its expert-data-parallel group); returns
  // one semaphore per unit, released when it is gathered.
  std::vector<sg4::SemaphorePtr> launch_gathers(ActorState& a, const GatherSchedule& g);
  // Whether the backward of micro-batch `mb` fills expert gradient buckets.
  bool fills_expert_buckets(int mb) const {
    return async_experts_ && (sharded_expert_grads_ || mb == sc_.plan.num_microbatches - 1);
  }
  // Waits until gathers[0..unit] are done (from *waited + 1 on), counting the wait as exposed.
  void wait_gathers(ActorState& a, const std::vector<sg4::SemaphorePtr>& gathers, int unit,
                    int* waited, int mb, int chunk);
  // Hands the gradients gathered so far to an asynchronous DP bucket when the bucket is full
  // (or `flush`).
  void maybe_launch_bucket(ActorState& a, bool flush);
  // The same for the expert gradients, over the expert-data-parallel group
  // (engine/expert_buckets.cc); a no-op unless async_experts_.
  void maybe_launch_expert_bucket(ActorState& a, bool flush);
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
  // A GPU's compute is one stream: no host runs two executions at once (helper actors only
  // move bytes), so a sleep times it as an execution would, at a third of SimGrid's cost per
  // activity. SimGrid rounds sleeps up to its precision (1 ns): shorter kernels execute.
  void compute(double seconds) {
    if (seconds <= 0) return;
    ++activities_;
    if (seconds < 1e-6) {
      sg4::this_actor::execute(seconds * host_speed_);
    } else {
      sg4::this_actor::sleep_for(seconds);
    }
  }
  // Runs `seconds` of a's compute; in a combined step, slower by a2a_stretch_ while the other
  // pass's all-to-all is in flight (its kernels hold SMs), at full speed once it ends.
  void compute_beside(ActorState& a, double seconds) {
    CombinedSide* other = a.beside;
    if (seconds > 0 && other != nullptr && other->comm != nullptr && !other->acquired &&
        a2a_stretch_ > 1) {
      const double start = sg4::Engine::get_clock();
      ++activities_;
      // What the held SMs cost is time the all-to-all costs the step: exposed EP time.
      if (other->done->acquire_timeout(seconds * a2a_stretch_)) {  // still in flight
        a.tl->ep_exposed_s += seconds * (a2a_stretch_ - 1);
        return;
      }
      other->acquired = true;
      const double stretched = sg4::Engine::get_clock() - start;
      a.tl->ep_exposed_s += stretched * (1 - 1 / a2a_stretch_);
      seconds -= stretched / a2a_stretch_;
    }
    compute(seconds);
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
  ExpertRanks experts_;  // expert-parallel and expert-data-parallel groups of a stage
  Shortcuts shortcuts_;
  std::unique_ptr<Platform> platform_;
  int t_ = 1, d_ = 1, cp_ = 1, p_ = 1, v_ = 1;
  int dc_ = 1;             // data x context: the gradient group's size
  int ep_ = 1;             // expert-parallel size (1 for dense models)
  double ep_load_ = 1;     // the busiest EP rank's tokens / mean (moe_expert_load)
  bool flex_ = false;      // the all-to-alls are flex (DeepEP) dispatches (flex_dispatch.h)
  ExpertRouting routing_;  // the MoE layers' top-k routing (for flex_)
  bool full_ = false, fuse_tp_ = false, one_rank_flows_ = false, one_replica_ = false;
  bool mirrored_tp_ = false;
  bool claimed_runs_ = false;  // shortcuts.h: claimed_runs
  // one_replica_ with several replicas filling their islands: data-parallel collectives are
  // lowered over the simulated GPUs (simulated_gpu_), inter-island edges mirrored.
  bool island_replicas_ = false;
  std::vector<char> simulated_gpu_;  // by GPU, with one_replica_
  bool nic_a2a_ = false;             // expert all-to-alls' cross-island flows one per NIC
  bool collapsed_flex_ = false;      // flex dispatches: one RDMA and one NVLink flow per member
  int replicas_ = 1;                 // data-parallel replicas simulated
  CollectiveOp dp_op_ = CollectiveOp::kAllReduce;
  bool async_dp_ = false;        // gradient buckets reduced as they fill (overlap or sharded)
  bool async_experts_ = false;   // expert gradient buckets too, over the expert-data group
  bool sharded_grads_ = false;   // buckets filled by every micro-batch's backward
  bool sharded_params_ = false;  // per-layer gathers before forward and backward
  // Expert buckets filled by every micro-batch's backward (sharded gradients, EDP > 1).
  bool sharded_expert_grads_ = false;
  LoweringOptions lowering_;
  double host_speed_ = 0;
  double a2a_stretch_ = 1;  // moe_all_to_all_compute_stretch: compute beside an all-to-all
  std::uint64_t activities_ = 0;
  int finished_ = 0;
  std::vector<ActorTimeline> timelines_;
  std::vector<ActorState> actors_;
  std::vector<sg4::SemaphorePtr> act_ready_, grad_ready_;  // indexed by channel()
  std::map<std::tuple<int, int, int>, Rendezvous> rendezvous_;
  // Lowered collectives by (actor, kind, op, bytes, step, combine).
  std::map<std::tuple<int, int, int, double, int, bool>, std::vector<Phase>> lowered_;
  std::map<const std::vector<Phase>*, std::unique_ptr<AloneSchedule>> alone_;  // null: shared
  std::vector<std::vector<FusedPass>> fused_fwd_, fused_bwd_;                  // [stage][chunk]
  // The work actors run (cluster.stragglers, docs/stragglers.md): [0] nominal (w_, fused_fwd_,
  // fused_bwd_); a slow GPU's with every kernel at its clock (workload/straggler_work.h), a TP
  // group's with the degraded NVLink with its fused collectives timed at that bandwidth.
  struct Variant {
    double clock = 1;
    bool degraded_nvlink = false;
    std::unique_ptr<Workload> own;  // null: w_
    const Workload* work = nullptr;
    ClusterSpec cluster;
    std::vector<std::vector<FusedPass>> own_fwd, own_bwd;  // [stage][chunk]
    const std::vector<std::vector<FusedPass>>* fwd = nullptr;
    const std::vector<std::vector<FusedPass>>* bwd = nullptr;
  };
  std::deque<Variant> variants_;              // a deque: actors hold references into it
  std::vector<GatherSchedule> step_gathers_;  // [stage], overlap_param_gather
  std::vector<std::vector<GatherSchedule>> layer_fwd_, layer_bwd_;  // [stage][chunk]
};

}  // namespace trident

#endif  // TRIDENT_ENGINE_STEP_SIMULATION_H_
