// The step lower bound of plan_bound.h.
#include "search/plan_bound.h"

#include <algorithm>

#include "schedule/rank_map.h"
#include "workload/collective_time.h"

namespace trident {
namespace {

// The shortest time the engine can give a pass: its compute, and its TP collectives as the
// closed form inside an island times them (fused_tp runs exactly this; flows that share
// links, or cross the network, take longer).
double pass_floor(const Pass& pass, const Scenario& sc) {
  if (sc.plan.tensor == 1) return pass.compute_s;
  return fuse_pass(pass, sc.plan.tensor, sc.cluster).duration;
}

// Whether the last compute instruction of `program` is a backward of chunk 0.
bool ends_with_first_chunk_backward(const StageProgram& program) {
  for (auto it = program.instrs.rbegin(); it != program.instrs.rend(); ++it) {
    if (it->kind == InstrKind::kForward) return false;
    if (it->kind == InstrKind::kBackward) return it->chunk == 0;
  }
  return false;
}

// The data-parallel collective `op` on `bytes` that nothing hides: the closed-form ring when
// every ring edge is one NIC-to-NIC flow (each GPU's flow is capped by its NIC), else 0.
double dp_floor(CollectiveOp op, double bytes, const Scenario& sc, const RankMap& ranks) {
  const int d = sc.plan.data;
  if (d < 2 || bytes <= 0 || !ranks.data_groups_one_per_island()) return 0;
  const NetworkSpec& net = sc.cluster.network;
  return ring_collective_time(op, d, bytes, net.latency, net.nic_bandwidth,
                              net.protocol_efficiency);
}

// The gradient parameters of the last bucket stage `st` launches with overlap_grad_reduce:
// buckets fill from the segments of each chunk's last-micro-batch backward and are flushed
// at the end of each such pass (the engine's maybe_launch_bucket), so the last one holds what
// the final backward (`last`) gathered since the bucket before it. Its reduction starts after
// that pass ends.
double last_bucket_params(const StageWork& st, const Pass& last) {
  double params = 0;
  for (const Segment& seg : last.segments) {
    if (seg.grad_params <= 0) continue;
    params += seg.grad_params;
    if (params >= st.grad_bucket_params) params = 0;  // launched when full
  }
  return params;
}

// The stage's last backward instruction, or nullptr.
const Instr* last_backward(const StageProgram& program) {
  for (auto it = program.instrs.rbegin(); it != program.instrs.rend(); ++it) {
    if (it->kind == InstrKind::kBackward) return &*it;
  }
  return nullptr;
}

}  // namespace

StepBound step_lower_bound(const Scenario& sc, const Workload& w,
                           const std::vector<StageProgram>& programs) {
  const PlanSpec& plan = sc.plan;
  const int p = plan.pipeline;
  const RankMap ranks(plan, sc.cluster);
  std::vector<double> first_fwd(p), first_bwd(p), busy(p), tail(p);
  for (int s = 0; s < p; ++s) {
    const StageWork& st = w.stages[s];
    first_fwd[s] = pass_floor(st.chunks.front().forward, sc);
    first_bwd[s] = pass_floor(st.chunks.front().backward, sc);
    double per_microbatch = 0;
    for (const ChunkWork& c : st.chunks) {
      per_microbatch += pass_floor(c.forward, sc) + pass_floor(c.backward, sc);
    }
    busy[s] = plan.num_microbatches * per_microbatch;
    const CollectiveOp reduce =
        plan.distributed_optimizer ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce;
    double dp = 0;
    if (!plan.overlap_grad_reduce) {
      dp = dp_floor(reduce, st.grad_bytes, sc, ranks);
    } else if (const Instr* last = last_backward(programs[s]);
               last && last->microbatch == plan.num_microbatches - 1 && st.params_per_gpu > 0) {
      // Only the last bucket is sure to be exposed: it starts when the last backward ends.
      const double params = last_bucket_params(st, st.chunks[last->chunk].backward);
      dp = dp_floor(reduce, params * st.grad_bytes / st.params_per_gpu, sc, ranks);
    }
    if (plan.distributed_optimizer) {
      dp += dp_floor(CollectiveOp::kAllGather, st.param_gather_bytes, sc, ranks);
    }
    tail[s] = dp + st.optimizer_s;
  }
  StepBound b;
  double fill = 0, best = -1;
  double chain_to_stage0 = 0;  // stage 0's last backward can end no earlier than this
  for (int s = 0; s < p; ++s) {
    // Stage s ends no earlier than its fill, its own passes and its tail.
    const double own = fill + busy[s] + tail[s];
    if (own > best) {
      best = own;
      b.compute_s = busy[s] + w.stages[s].optimizer_s;
      b.dp_s = tail[s] - w.stages[s].optimizer_s;
      b.pipeline_s = fill;
    }
    if (ends_with_first_chunk_backward(programs[s])) {
      double drain = 0;
      for (int j = 0; j < s; ++j) drain += first_bwd[j];
      chain_to_stage0 = std::max(chain_to_stage0, fill + busy[s] + drain);
    }
    fill += first_fwd[s];
  }
  const double via_stage0 = chain_to_stage0 + tail[0];
  if (via_stage0 > best) {
    best = via_stage0;
    b.compute_s = busy[0] + w.stages[0].optimizer_s;
    b.dp_s = tail[0] - w.stages[0].optimizer_s;
    b.pipeline_s = via_stage0 - b.compute_s - b.dp_s;
  }
  b.total_s = best;
  return b;
}

}  // namespace trident
