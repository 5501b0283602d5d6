// The step lower bound of plan_bound.h.
#include "search/plan_bound.h"

#include <algorithm>
#include <map>
#include <set>

#include "layout/expert_ranks.h"
#include "layout/rank_map.h"
#include "lowering/flex_dispatch.h"
#include "workload/collective_time.h"
#include "workload/expert_routing.h"
#include "workload/moe_ops.h"
#include "workload/tp_overlap.h"

namespace trident {
namespace {

using TpLayout = GroupLayout;

TpLayout group_layout(const ClusterSpec& cluster, const RankMap& ranks,
                      const std::vector<int>& group) {
  TpLayout out;
  std::map<int, std::set<int>> nics_by_island;
  std::map<int, int> members;
  const int gpn = cluster.gpus_per_node;
  for (int gpu : group) {
    const int island = ranks.island_of(gpu);
    ++members[island];
    nics_by_island[island].insert((gpu / gpn) * cluster.network.nics_per_node +
                                  (gpu % gpn) % cluster.network.nics_per_node);
  }
  out.islands = static_cast<int>(members.size());
  out.per_island = members.begin()->second;
  out.nics = static_cast<int>(nics_by_island.begin()->second.size());
  for (const auto& [island, n] : members) out.per_island = std::min(out.per_island, n);
  for (const auto& [island, set] : nics_by_island) {
    out.nics = std::min(out.nics, static_cast<int>(set.size()));
  }
  return out;
}

// The least time a collective `op` of `bytes` over a group of `n` spanning islands can take:
// every island must send out (I-1)/I of the buffer per reduce-scatter or all-gather phase
// (twice for an all-reduce) through at most `nics` NICs (the bandwidth bound of Patarasuk &
// Yuan 2009, islands as nodes); and, without in-switch reduction, every member sends at least
// (n-1)/n of it per phase (a ring and the hierarchical lowering both send exactly that) at no
// more than its fastest link's bandwidth. 0 inside one island.
double spanning_collective_floor(CollectiveOp op, double bytes, int n, const Scenario& sc,
                                 const TpLayout& l) {
  if (l.islands < 2 || n < 2 || bytes <= 0) return 0;
  const double phases = op == CollectiveOp::kAllReduce ? 2 : 1;
  const double islands = l.islands;
  const double network =
      phases * (islands - 1) / islands * bytes / (l.nics * sc.cluster.network.nic_bandwidth);
  if (sc.cluster.nvlink.in_switch_reduction_efficiency > 0) return network;
  const double fastest = std::max(sc.cluster.nvlink.bandwidth, sc.cluster.network.nic_bandwidth);
  const double member = phases * (n - 1.0) / n * bytes / fastest;
  return std::max(network, member);
}

// fuse_pass(pass, t, cluster).duration, with the island closed forms taken from `memo`: the
// same operations in the same order (fuse_segment, segment_overlap), so the same double.
double fused_duration(const Pass& pass, int t, const ClusterSpec& cluster, BoundMemo* memo) {
  double duration = 0;
  for (const Segment& seg : pass.segments) {
    if (seg.tp_bytes <= 0 || t < 2) {
      duration += seg.compute_s + seg.overlap_s;
      continue;
    }
    const double comm = memo->island_time(seg.tp_op, t, seg.tp_bytes, cluster);
    const double chunk =
        seg.tp_overlap == TpOverlap::kPipeline
            ? memo->island_time(seg.tp_op, t, seg.tp_bytes / seg.tp_splits, cluster)
            : 0;
    const OverlapSpan span = overlap_span(seg.tp_overlap, t, seg.tp_splits, comm, chunk,
                                          seg.overlap_s * seg.overlap_stretch);
    duration += seg.compute_s + std::max(span.duration, seg.overlap_s);
  }
  return duration;
}

// The least time a MoE all-to-all of B bytes per GPU over one expert-parallel group takes:
// `per_byte` x B. Each member i sends row i of imbalanced_all_to_all_bytes (B/n x `hot` to
// member 0, B/n x `cold` to each other; the combine is the transpose) and whatever it sends
// to or receives from another island crosses its NIC: the busiest NIC direction sets the
// floor. 0 with every member in one island.
struct ExpertFloor {
  double per_byte = 0;  // alltoall dispatcher
  int ep = 1;           // allgather dispatcher: its all-gathers and reduce-scatters over the
  GroupLayout layout;   // EP group, floored as any collective spanning islands
};

ExpertFloor expert_floor(const std::vector<int>& islands, double load, const ClusterSpec& c) {
  ExpertFloor f;
  const int n = static_cast<int>(islands.size());
  if (n < 2) return f;
  const double hot = std::min(std::max(load, 0.0), double(n));
  const double cold = (n - hot) / (n - 1);
  double busiest = 0;  // in units of B / n
  for (int i = 0; i < n; ++i) {
    double out = 0;
    int senders = 0;
    for (int j = 0; j < n; ++j) {
      if (islands[j] == islands[i]) continue;
      out += j == 0 ? hot : cold;
      ++senders;
    }
    const double in = senders * (i == 0 ? hot : cold);
    busiest = std::max(busiest, std::max(out, in));
  }
  f.per_byte = busiest / n / (c.network.nic_bandwidth * c.network.protocol_efficiency);
  return f;
}

// The least time of a flex (DeepEP) dispatch or combine of B token bytes per GPU over one
// expert-parallel group (members' islands `islands`): `per_byte` x B. Whatever a member sends
// or receives over RDMA crosses its NIC, and what it writes to or receives from the others of
// its island (its own tokens and those it forwards) its NVLink port; the busiest port sets
// the floor (the bytes of lowering/flex_dispatch.h, read off its collapsed lowering, whose
// flows carry each port's busier direction). 0 with fewer than two members.
ExpertFloor flex_floor(const std::vector<int>& islands, const ExpertRouting& routing, double load,
                       const ClusterSpec& c) {
  ExpertFloor f;
  const int n = static_cast<int>(islands.size());
  if (n < 2 || routing.experts % n != 0) return f;
  std::vector<int> members(n);
  for (int m = 0; m < n; ++m) members[m] = m;
  const auto island_of = [&islands](int m) { return islands[m]; };
  double nic = 0, nvlink = 0;  // the busiest port's bytes per token byte
  for (const Phase& ph :
       lower_flex_dispatch_collapsed({members}, 1.0, routing, load, false, island_of)) {
    for (const Flow& fl : ph.flows) {
      double& busiest = fl.src == fl.dst ? nic : nvlink;  // a loopback: the member's NIC
      busiest = std::max(busiest, fl.bytes);
    }
  }
  f.per_byte = std::max(nic / (c.network.nic_bandwidth * c.network.protocol_efficiency),
                        nvlink / (c.nvlink.bandwidth * c.nvlink.protocol_efficiency));
  return f;
}

// The least time of a segment's collective as a TP collective (what pass_floor_tp counts for
// a segment without tp_comm_overlap): its closed form inside an island, the spanning floor
// across islands; 0 without tensor parallelism.
double tp_floor(const Segment& seg, const Scenario& sc, const TpLayout& layout, BoundMemo* memo) {
  const int t = sc.plan.tensor;
  if (t < 2 || seg.tp_bytes <= 0) return 0;
  if (layout.islands > 1) return spanning_collective_floor(seg.tp_op, seg.tp_bytes, t, sc, layout);
  return memo ? memo->island_time(seg.tp_op, t, seg.tp_bytes, sc.cluster)
              : island_collective_time(seg.tp_op, t, seg.tp_bytes, sc.cluster);
}

// The shortest time the engine can give a pass: its compute, and its TP collectives. Inside
// an island, their closed form (fused_tp runs exactly this; flows that share links take
// longer); across islands, the floor above, beside the compute that overlaps them.
double pass_floor_tp(const Pass& pass, const Scenario& sc, const TpLayout& layout,
                     BoundMemo* memo) {
  if (sc.plan.tensor == 1) {
    double total = 0;
    for (const Segment& seg : pass.segments) total += seg.compute_s + seg.overlap_s;
    return total;
  }
  if (layout.islands == 1) {
    return memo ? fused_duration(pass, sc.plan.tensor, sc.cluster, memo)
                : fuse_pass(pass, sc.plan.tensor, sc.cluster).duration;
  }
  double total = 0;
  for (const Segment& seg : pass.segments) {
    total += seg.compute_s + std::max(seg.overlap_s, tp_floor(seg, sc, layout, memo));
  }
  return total;
}

// The bandwidth of the slowest link a flow between two GPUs crosses: NVLink inside an island,
// the NIC when it leaves the island (the platform's routes, platform/platform.h).
double route_bandwidth(bool across_islands, const ClusterSpec& cluster) {
  return across_islands ? cluster.network.nic_bandwidth : cluster.nvlink.bandwidth;
}

// The least time of a pass's context-parallel ring steps: each ends when its attention block
// and its ring shift (a group collective: every member waits for the slowest flow) are both
// done, and no flow runs faster than the slowest link on its route, a NIC when the ring spans
// NVLink islands (route latencies count 0).
double ring_floor(const Pass& pass, const Scenario& sc, const GroupLayout& context) {
  const double bandwidth = route_bandwidth(context.islands > 1, sc.cluster);
  double total = 0;
  for (const Segment& seg : pass.segments) {
    for (const RingStep& step : seg.ring) total += std::max(step.compute_s, step.bytes / bandwidth);
  }
  return total;
}

// pass_floor_tp with the ring steps, and which counts a MoE dispatch or combine as a TP
// collective, raised to the expert floor `ef` (when given) where that is longer.
double pass_floor(const Pass& pass, const Scenario& sc, const TpLayout& layout, BoundMemo* memo,
                  const ExpertFloor* ef, const GroupLayout& context) {
  double total = pass_floor_tp(pass, sc, layout, memo) + ring_floor(pass, sc, context);
  if (ef == nullptr || (ef->per_byte <= 0 && ef->layout.islands < 2)) return total;
  for (const Segment& seg : pass.segments) {
    if (!seg.expert || seg.tp_bytes <= 0) continue;
    const double floor =
        seg.tp_op == CollectiveOp::kAllToAll
            ? ef->per_byte * seg.tp_bytes
            : spanning_collective_floor(seg.tp_op, seg.tp_bytes, ef->ep, sc, ef->layout);
    const double before = std::max(seg.overlap_s, tp_floor(seg, sc, layout, memo));
    total += std::max(before, floor) - before;
  }
  return total;
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
// every ring edge is one NIC-to-NIC flow (each GPU's flow is capped by its NIC); else, for a
// group spanning islands, the island-egress floor above; else 0.
double dp_floor(CollectiveOp op, double bytes, const Scenario& sc, bool one_per_island,
                const TpLayout& layout) {
  const int d = sc.plan.data;
  if (d < 2 || bytes <= 0) return 0;
  if (!one_per_island) {
    return spanning_collective_floor(op, bytes, d, sc, layout);
  }
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

// optim_grads_params: the gathers a pass's first segment waits for (the engine launches a
// pass's per-layer gathers when the pass starts, so nothing hides them): its dense unit over
// the data-parallel group, then its routed experts over the expert-data-parallel group, one
// after the other on one stream. 0 when the first segment waits for nothing.
double first_gather_floor(const Pass& pass, const StageWork& st, const Scenario& sc,
                          bool one_per_island, const TpLayout& dp_layout,
                          const TpLayout* expert_layout) {
  if (!sc.plan.shards_params() || pass.segments.empty()) return 0;
  const Segment& seg = pass.segments.front();
  double floor = 0;
  const double dense = st.params_per_gpu - st.expert_params_per_gpu;
  if (seg.weight_params > 0 && dense > 0) {
    floor += dp_floor(CollectiveOp::kAllGather, seg.weight_params * st.param_gather_bytes / dense,
                      sc, one_per_island, dp_layout);
  }
  if (seg.expert_weight_params > 0 && expert_layout && st.expert_params_per_gpu > 0) {
    const double bytes =
        seg.expert_weight_params * st.expert_param_gather_bytes / st.expert_params_per_gpu;
    floor += spanning_collective_floor(CollectiveOp::kAllGather, bytes,
                                       sc.plan.expert_data_parallel(), sc, *expert_layout);
  }
  return floor;
}

// The stage's last backward instruction, or nullptr.
const Instr* last_backward(const StageProgram& program) {
  for (auto it = program.instrs.rbegin(); it != program.instrs.rend(); ++it) {
    if (it->kind == InstrKind::kBackward) return &*it;
  }
  return nullptr;
}

// The least time of one pipeline transfer into stage `to` from stage `from`: its bytes over
// the slowest link of the route, a NIC when the stages sit in different NVLink islands (route
// latencies count 0).
double p2p_floor(int from, int to, const Workload& w, const PlanLayouts& layouts,
                 const ClusterSpec& cluster) {
  const bool across = layouts.stage_island[from] != layouts.stage_island[to];
  return w.stages[to].p2p_bytes / route_bandwidth(across, cluster);
}

// The receiving stage's share of its pipeline transfers: the engine starts each when the
// receiver reaches its receive (the sender done) and runs the next pass once it has arrived,
// so every receive of `program` costs its stage at least p2p_floor.
double receives_floor(const StageProgram& program, int p, const Workload& w,
                      const PlanLayouts& layouts, const ClusterSpec& cluster) {
  const int s = program.stage;
  double total = 0;
  for (const Instr& in : program.instrs) {
    if (in.kind == InstrKind::kRecvActivation) {
      total += p2p_floor(previous_virtual_stage(s, in.chunk, p).stage, s, w, layouts, cluster);
    } else if (in.kind == InstrKind::kRecvGradient) {
      total += p2p_floor(next_virtual_stage(s, in.chunk, p).stage, s, w, layouts, cluster);
    }
  }
  return total;
}

}  // namespace

double BoundMemo::island_time(CollectiveOp op, int t, double bytes, const ClusterSpec& cluster) {
  const auto key = std::make_tuple(static_cast<int>(op), t, bytes);
  const auto it = island_.find(key);
  if (it != island_.end()) return it->second;
  const double time = island_collective_time(op, t, bytes, cluster);
  island_.emplace(key, time);
  return time;
}

const PlanLayouts& BoundMemo::layouts(const PlanSpec& plan, const ClusterSpec& cluster) {
  // What RankMap reads of the plan.
  std::vector<int> key = {plan.tensor,         plan.context,         plan.pipeline,
                          plan.data,           plan.expert_parallel, plan.expert_tensor_parallel,
                          plan.gpus_per_island};
  for (ParallelDim d : plan.placement) key.push_back(static_cast<int>(d));
  const auto it = layouts_.find(key);
  if (it != layouts_.end()) return it->second;
  const RankMap ranks(plan, cluster);
  PlanLayouts out;
  out.tensor = group_layout(cluster, ranks, ranks.tensor_group(0, 0));
  out.data_one_per_island = ranks.data_groups_one_per_island();
  for (int s = 0; s < plan.pipeline; ++s) {
    out.data.push_back(group_layout(cluster, ranks, ranks.data_group(0, s)));
    out.context.push_back(group_layout(cluster, ranks, ranks.context_group(0, 0, s)));
    out.stage_island.push_back(ranks.island_of(ranks.gpu(0, 0, 0, s)));
  }
  const int stage_gpus = plan.tensor * plan.context * plan.data;
  if (stage_gpus % (plan.expert_parallel * plan.expert_tensor()) == 0) {
    const ExpertRanks experts(ranks, plan);
    for (int s = 0; s < plan.pipeline; ++s) {
      out.expert_data.push_back(group_layout(cluster, ranks, experts.expert_data_group(0, s)));
      std::vector<int> islands;
      if (plan.expert_parallel > 1) {
        const std::vector<int> group = experts.expert_group(0, s);
        for (int gpu : group) islands.push_back(ranks.island_of(gpu));
        out.expert.push_back(group_layout(cluster, ranks, group));
      } else {
        out.expert.emplace_back();
      }
      out.expert_islands.push_back(std::move(islands));
    }
  }
  return layouts_.emplace(key, std::move(out)).first->second;
}

StepBound step_lower_bound(const Scenario& sc, const Workload& w,
                           const std::vector<StageProgram>& programs, BoundMemo* memo) {
  BoundMemo local;  // without a memo: fuse_pass itself, and this candidate's layouts
  const PlanSpec& plan = sc.plan;
  const int p = plan.pipeline;
  const PlanLayouts& layouts = (memo ? memo : &local)->layouts(plan, sc.cluster);
  const TpLayout& layout = layouts.tensor;
  const bool one_per_island = layouts.data_one_per_island;
  std::vector<double> first_fwd(p), first_bwd(p), busy(p), tail(p);
  for (int s = 0; s < p; ++s) {
    const StageWork& st = w.stages[s];
    const TpLayout& dp_layout = layouts.data[s];
    const TpLayout* expert_layout = layouts.expert_data.empty() ? nullptr : &layouts.expert_data[s];
    // The dispatchers' floors.
    ExpertFloor ef;
    if (sc.model.moe() && !layouts.expert_islands.empty() && !layouts.expert_islands[s].empty()) {
      if (plan.moe_dispatcher == MoeDispatcher::kAllToAll) {
        ef = expert_floor(layouts.expert_islands[s], moe_expert_load(sc.model, plan), sc.cluster);
      } else if (plan.moe_dispatcher == MoeDispatcher::kFlex) {
        ef = flex_floor(layouts.expert_islands[s], expert_routing(sc.model),
                        moe_expert_load(sc.model, plan), sc.cluster);
      } else if (plan.moe_dispatcher == MoeDispatcher::kAllGather) {
        ef.ep = plan.expert_parallel;
        ef.layout = layouts.expert[s];
      }
    }
    double per_microbatch = 0;
    for (size_t c = 0; c < st.chunks.size(); ++c) {
      const Pass& forward = st.chunks[c].forward;
      const Pass& backward = st.chunks[c].backward;
      const double fwd =
          pass_floor(forward, sc, layout, memo, &ef, layouts.context[s]) +
          first_gather_floor(forward, st, sc, one_per_island, dp_layout, expert_layout);
      const double bwd =
          pass_floor(backward, sc, layout, memo, &ef, layouts.context[s]) +
          first_gather_floor(backward, st, sc, one_per_island, dp_layout, expert_layout);
      if (c == 0) {
        first_fwd[s] = fwd;
        first_bwd[s] = bwd;
      }
      per_microbatch += fwd + bwd;
    }
    busy[s] = plan.num_microbatches * per_microbatch +
              receives_floor(programs[s], p, w, layouts, sc.cluster);
    const CollectiveOp reduce =
        plan.distributed_optimizer ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce;
    double dp = 0;
    // Buckets reduced as they fill: under overlap_grad_reduce, and always with sharded
    // gradients (the engine's async_dp_).
    if (!plan.overlap_grad_reduce && !plan.shards_gradients()) {
      dp = dp_floor(reduce, st.grad_bytes, sc, one_per_island, dp_layout);
    } else if (const Instr* last = last_backward(programs[s]);
               last && last->microbatch == plan.num_microbatches - 1 && st.params_per_gpu > 0) {
      // Only the last bucket is sure to be exposed: it starts when the last backward ends.
      const double params = last_bucket_params(st, st.chunks[last->chunk].backward);
      dp = dp_floor(reduce, params * st.grad_bytes / st.params_per_gpu, sc, one_per_island,
                    dp_layout);
    }
    // The step's parameter all-gather: hidden behind the next step's forward under
    // overlap_param_gather, and per layer with sharded weights (each pass's first gathers
    // are counted in its floor above).
    if (plan.distributed_optimizer && !plan.overlap_param_gather && !plan.shards_params()) {
      dp +=
          dp_floor(CollectiveOp::kAllGather, st.param_gather_bytes, sc, one_per_island, dp_layout);
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
      // The gradient then crosses stages s-1 .. 0, each receiving it before its backward.
      double drain = 0;
      for (int j = 0; j < s; ++j) {
        drain += first_bwd[j] + p2p_floor(j + 1, j, w, layouts, sc.cluster);
      }
      chain_to_stage0 = std::max(chain_to_stage0, fill + busy[s] + drain);
    }
    // Stage s+1 receives the first micro-batch once stage s has received and run it (stage
    // s+1's own receive counts in busy[s+1]).
    fill += first_fwd[s] + (s > 0 ? p2p_floor(s - 1, s, w, layouts, sc.cluster) : 0.0);
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
