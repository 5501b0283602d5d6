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
  return fuse_pass(pass, sc.plan.tensor, sc.cluster.nvlink).duration;
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
    double dp = plan.overlap_grad_reduce ? 0 : dp_floor(reduce, st.grad_bytes, sc, ranks);
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
