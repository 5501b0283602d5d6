// The collectives of the step simulation: rendezvous of their members, lowering to flows, TP
// chunks beside GEMMs, data-parallel buckets and parameter gathers, and the context-parallel
// ring steps.
#include <algorithm>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "engine/phase_runner.h"
#include "engine/step_simulation.h"
#include "lowering/all_to_all.h"
#include "lowering/flex_dispatch.h"
#include "lowering/fused_passes.h"

namespace trident {

const std::vector<Phase>& StepSimulation::lowered(ActorState& a, CollKind kind, CollectiveOp op,
                                                  double bytes, int step, bool combine,
                                                  const std::vector<std::vector<int>>& groups) {
  const auto island_of = [this](int gpu) { return platform_->island_of(gpu); };
  // Every member of a group lowers a collective the same way each time: lowered once per
  // (actor, kind, op, bytes, step, combine).
  const auto lkey = std::make_tuple(actor_id(a.tp, a.cp, a.dp, a.pp), static_cast<int>(kind),
                                    static_cast<int>(op), bytes, step, combine);
  auto cached = lowered_.find(lkey);
  if (cached == lowered_.end()) {
    std::vector<Phase> phases;
    if (kind == CollKind::kContext) {
      phases = lower_ring_exchange(groups, bytes);
    } else if (op == CollectiveOp::kAllToAll && flex_) {
      phases =
          collapsed_flex_
              ? lower_flex_dispatch_collapsed(groups, bytes, routing_, ep_load_, combine, island_of)
              : lower_flex_dispatch(groups, bytes, routing_, ep_load_, combine, island_of);
    } else if (op == CollectiveOp::kAllToAll) {
      const auto matrix = imbalanced_all_to_all_bytes(ep_, bytes, ep_load_, combine);
      phases = nic_a2a_ ? lower_all_to_all_via_nics(groups, matrix, island_of)
                        : lower_all_to_all(groups, matrix);
    } else if (kind == CollKind::kTensor && mirrored_tp_) {
      // Lowered for tensor rank 0 (shortcuts.h: mirrored_tp).
      LoweringOptions mirrored = lowering_;
      const int rank0 = groups.front().front();
      mirrored.simulated = [rank0](int gpu) { return gpu == rank0; };
      mirrored.mirror_inter = mirrored.closed_form_intra = shortcuts_.tp_fills_islands;
      phases = lower_collective(op, groups, bytes, island_of, mirrored);
    } else if (island_replicas_ && (kind == CollKind::kData || kind == CollKind::kGather)) {
      // The simulated replicas' own NVLink rings; their inter-island edges mirrored.
      LoweringOptions mirrored = lowering_;
      mirrored.simulated = [this](int gpu) { return simulated_gpu_[gpu] != 0; };
      mirrored.mirror_inter = true;
      phases = lower_collective(op, groups, bytes, island_of, mirrored);
    } else if (one_replica_ && (kind == CollKind::kExpertData || kind == CollKind::kExpertGather)) {
      // Replicas standing for others over expert groups: the simulated GPUs' expert-data
      // rings, inter-island edges mirrored (lowering/all_to_all_shortcut.h).
      LoweringOptions mirrored = lowering_;
      mirrored.simulated = [this](int gpu) { return simulated_gpu_[gpu] != 0; };
      mirrored.mirror_inter = true;
      phases = lower_collective(op, groups, bytes, island_of, mirrored);
    } else if (one_replica_ && (kind == CollKind::kData || kind == CollKind::kGather)) {
      // One replica mirrored: each context rank's edge of the d x cp ring on its own NIC.
      phases = lower_mirrored(choose_collective_plan(op, {dc_, dc_, 1}, bytes, sc_.cluster),
                              ranks_.gpu(tensor_ranks(a).front(), a.cp, a.dp, a.pp), sc_.cluster);
    } else if (kind == CollKind::kData || kind == CollKind::kGather ||
               kind == CollKind::kExpertData || kind == CollKind::kExpertGather) {
      // Gradients and weights of the distributed optimizer, in one or several copies.
      phases = lower_partial_data_parallel(
          op, groups, bytes, sc_.plan.distributed_optimizer_instances, island_of, lowering_);
    } else {
      phases = lower_collective(op, groups, bytes, island_of, lowering_);
    }
    if (op == CollectiveOp::kAllToAll && one_replica_) {
      // Replicas standing for others (shortcuts.h: one_replica over expert groups): the
      // collapsed flows of the simulated islands' members only; the others' are alike.
      keep_simulated_flows(&phases, simulated_gpu_);
    }
    if (step >= 0) {
      // One ring step: the uncollapsed ring's phase `step`; a lowering that is not one ring
      // (hierarchical) runs whole in step 0.
      LoweringOptions steps = lowering_;
      steps.collapse_steps = false;
      auto ring = lower_collective(op, groups, bytes, island_of, steps);
      const size_t n = groups.front().size();
      if (ring.size() + 1 == n) {
        // One step's route latency only: the step's flows add it themselves.
        phases = {ring[step]};
        phases.front().latency = 0;
      } else if (step > 0) {
        phases.clear();
      }
    }
    cached = lowered_.emplace(lkey, std::move(phases)).first;
  }
  return cached->second;
}

int StepSimulation::simulated_expert_participants(bool data, int id) const {
  int n = 0;
  for (int dp = 0; dp < replicas_; ++dp) {
    for (int cp = 0; cp < cp_; ++cp)
      n += experts_.join(experts_.local(0, cp, dp), t_, data).id == id;
  }
  return n;
}

sg4::SemaphorePtr StepSimulation::join(ActorState& a, CollKind kind, CollectiveOp op, double bytes,
                                       bool async, int step, bool combine,
                                       std::shared_ptr<double>* finished) {
  std::vector<std::vector<int>> groups;
  int participants = 1, group_id = 0, seq = 0;
  if (kind == CollKind::kTensor) {
    groups.push_back(ranks_.tensor_group(a.cp, a.dp, a.pp));
    participants = full_ ? t_ : 1;
    group_id = (a.pp * d_ + a.dp) * cp_ + a.cp;
    seq = a.tp_seq++;
  } else if (kind == CollKind::kExpert || kind == CollKind::kExpertData ||
             kind == CollKind::kExpertGather) {
    // An actor stands for one GPU (full) or its TP group's ranks (layout/expert_ranks.h).
    const bool data = kind != CollKind::kExpert;
    const std::vector<int> tr = tensor_ranks(a);
    const int base = experts_.local(0, a.cp, a.dp);
    groups = experts_.groups(base + tr.front(), static_cast<int>(tr.size()), a.pp, data);
    const ExpertJoin j =
        full_ ? experts_.join(base + a.tp, 1, data) : experts_.join(base, t_, data);
    participants = one_replica_ ? simulated_expert_participants(data, j.id) : j.participants;
    group_id = a.pp * t_ * cp_ * d_ + j.id;
    seq = kind == CollKind::kExpertGather ? a.expert_gather_seq++ : data ? a.edp_seq++ : a.ep_seq++;
  } else if (kind == CollKind::kContext) {
    for (int r : tensor_ranks(a)) groups.push_back(ranks_.context_group(r, a.dp, a.pp));
    participants = cp_;
    group_id = full_ ? (a.pp * d_ + a.dp) * t_ + a.tp : a.pp * replicas_ + a.dp;
    seq = a.cp_seq++;
  } else {
    // Megatron's data-parallel group with context parallelism: d * cp members. One replica
    // mirrored: each context rank's ring edge runs on its own NIC, alone.
    for (int r : tensor_ranks(a)) groups.push_back(ranks_.data_group(r, a.pp));
    const bool alone = one_replica_ && !island_replicas_;
    participants = alone ? 1 : replicas_ * cp_;
    group_id = full_ ? a.pp * t_ + a.tp : (alone ? a.pp * cp_ + a.cp : a.pp);
    seq = kind == CollKind::kGather ? a.gather_seq++ : a.dp_seq++;
  }
  const auto key = std::make_tuple(static_cast<int>(kind), group_id, seq);
  // A synchronous collective of one participant runs at once, with no rendezvous to wait on.
  const bool solo = participants == 1 && !async;
  Rendezvous solo_rv;
  Rendezvous& rv = solo ? solo_rv : rendezvous_[key];
  if (!rv.done && !solo) rv.done = sg4::Semaphore::create(0);
  if (finished != nullptr && !rv.finished) rv.finished = std::make_shared<double>(0);
  if (finished != nullptr) *finished = rv.finished;
  sg4::SemaphorePtr done = rv.done;
  // Asynchronous gradient buckets are recorded for their members; expert all-to-alls by
  // whoever waits for them.
  const bool bucket = async && finished == nullptr;
  if (bucket) rv.members.push_back(&a);
  if (++rv.arrived == participants) {
    std::vector<ActorState*> members = std::move(rv.members);
    std::shared_ptr<double> end = rv.finished;
    if (!solo) rendezvous_.erase(key);
    // lowered_ never erases: the entry outlives an asynchronous drive.
    const std::vector<Phase>* phases = &lowered(a, kind, op, bytes, step, combine, groups);
    auto drive = [this, phases, done, participants, members, op, bytes, end]() {
      const double start = sg4::Engine::get_clock();
      run_phases(*platform_, *phases, &activities_);
      if (end) *end = sg4::Engine::get_clock();
      // A bucket runs beside its members' compute: record it for the trace, not as exposed.
      for (ActorState* m : members) {
        if (Interval* iv = record(*m, IntervalKind::kDpComm, start, -1)) {
          iv->bucket = m->buckets;
          iv->op = op;
          iv->bytes = bytes;
        }
        m->buckets += 1;
      }
      for (int i = 0; done && i < participants; ++i) done->release();
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
                                  int mb, int chunk, int layer, int step, bool combine) {
  const double start = sg4::Engine::get_clock();
  await(join(a, kind, op, bytes, /*async=*/false, step, combine));
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

void StepSimulation::overlapped_segment(ActorState& a, const Segment& seg, int mb, int chunk) {
  const bool ring = seg.tp_overlap == TpOverlap::kRingExchange;
  const int n = ring ? t_ : seg.tp_splits;
  const double gemm_chunk = seg.overlap_s * seg.overlap_stretch / n;
  // Ring exchange: chunk k's GEMM runs beside ring step k (the local chunk needs none), the
  // last chunk after the last step. Pipeline: chunk k's reduce-scatter beside chunk k+1's GEMM.
  if (!ring) compute(gemm_chunk);
  for (int k = 0; k + 1 < n; ++k) {
    ++activities_;
    sg4::ExecPtr gemm = sg4::this_actor::exec_async(gemm_chunk * host_speed_);
    collective(a, CollKind::kTensor, seg.tp_op, ring ? seg.tp_bytes : seg.tp_bytes / n, mb, chunk,
               seg.layer, ring ? k : -1);
    gemm->wait();
  }
  if (ring) {
    compute(gemm_chunk);
  } else {
    collective(a, CollKind::kTensor, seg.tp_op, seg.tp_bytes / n, mb, chunk, seg.layer);
  }
}

std::vector<sg4::SemaphorePtr> StepSimulation::launch_gathers(ActorState& a,
                                                              const GatherSchedule& g) {
  const std::vector<double>& units = g.unit_params;
  std::vector<sg4::SemaphorePtr> done;
  for (size_t i = 0; i < units.size(); ++i) done.push_back(sg4::Semaphore::create(0));
  const StageWork& st = w_.stages[a.pp];
  const double per_param = st.param_gather_bytes / (st.params_per_gpu - st.expert_params_per_gpu);
  // Expert units: the routed experts' weights over the expert-data-parallel group.
  std::vector<double> bytes;
  std::vector<CollKind> kinds;
  for (size_t i = 0; i < units.size(); ++i) {
    const bool expert = i < g.expert.size() && g.expert[i];
    bytes.push_back(expert ? units[i] * st.expert_param_gather_bytes / st.expert_params_per_gpu
                           : units[i] * per_param);
    kinds.push_back(expert ? CollKind::kExpertGather : CollKind::kGather);
  }
  sg4::Actor::create("gathers", sg4::this_actor::get_host(), [this, &a, bytes, kinds, done]() {
    for (size_t i = 0; i < bytes.size(); ++i) {
      const double start = sg4::Engine::get_clock();
      await(join(a, kinds[i], CollectiveOp::kAllGather, bytes[i], false));
      // Runs beside the compute: recorded for the trace, exposed only where a pass waits.
      if (Interval* iv = record(a, IntervalKind::kDpComm, start, -1)) {
        iv->op = CollectiveOp::kAllGather;
        iv->bytes = bytes[i];
        iv->bucket = static_cast<std::int32_t>(i);
      }
      done[i]->release();
    }
  });
  return done;
}

void StepSimulation::wait_gathers(ActorState& a, const std::vector<sg4::SemaphorePtr>& gathers,
                                  int unit, int* waited, int mb, int chunk) {
  const double start = sg4::Engine::get_clock();
  for (; *waited < unit; ++*waited) gathers[*waited + 1]->acquire();
  const double waited_s = sg4::Engine::get_clock() - start;
  if (waited_s <= 0) return;
  a.tl->dp_exposed_s += waited_s;
  a.tl->param_gather_exposed_s += waited_s;
  if (Interval* iv = record(a, IntervalKind::kDpComm, start, mb, chunk)) {
    iv->op = CollectiveOp::kAllGather;
    iv->bucket_wait = true;
  }
}

double StepSimulation::expert_data_collective(ActorState& a, bool gather) {
  const StageWork& st = w_.stages[a.pp];
  const double bytes = gather ? st.expert_param_gather_bytes : st.expert_grad_bytes;
  if (bytes <= 0 || experts_.expert_data_parallel() <= 1) return 0;
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

void StepSimulation::ring_step(ActorState& a, const RingStep& step, int mb, int chunk, int layer) {
  a.tl->compute_s += step.compute_s;
  if (step.bytes <= 0) {
    compute(step.compute_s);
    return;
  }
  // Transformer Engine launches the send/recv, runs the block, then waits for both.
  const double start = sg4::Engine::get_clock();
  sg4::ExecPtr block;
  if (step.compute_s > 0) {
    ++activities_;
    block = sg4::this_actor::exec_async(step.compute_s * host_speed_);
  }
  await(join(a, CollKind::kContext, CollectiveOp::kAllGather, step.bytes, /*async=*/false));
  const double transfer_end = sg4::Engine::get_clock();
  if (block) block->wait();
  a.tl->cp_exposed_s += std::max(0.0, (sg4::Engine::get_clock() - start) - step.compute_s);
  if (Interval* iv = record(a, IntervalKind::kCpComm, start, transfer_end, mb, chunk)) {
    iv->bytes = step.bytes;
    iv->layer = layer;
  }
}

}  // namespace trident
