// The simulation-size checks of config/checks.h: the scope of a simulated step, its estimated
// SimGrid activities, and the limits of config/limits.h on GPUs, routes, schedule instructions
// and activities.
#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "config/checks.h"

namespace trident {
namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

void add(std::vector<SpecIssue>* issues, std::vector<std::string> keys, std::string message) {
  issues->push_back(SpecIssue{std::move(keys), std::move(message)});
}

}  // namespace

SimulatedScope every_replica_scope(const PlanSpec& p, bool full_fidelity) {
  SimulatedScope s;
  s.full_fidelity = full_fidelity;
  s.replicas = p.data;
  return s;
}

double estimated_sim_activities(const PlanSpec& p, const ModelSpec& m, const ClusterSpec& c,
                                const SimulatedScope& scope) {
  // Counted per actor from what the engine runs (engine/simulator.cc, step_collectives.cc,
  // claimed_runs.cc, phase_runner.cc): each compute, kernel beside a collective, flow and
  // sleep is one activity. Claimed runs only ever replace flows with one wait, and are
  // counted as the flows they may turn back into.
  const bool full = scope.full_fidelity;
  const double t = p.tensor, pp = p.pipeline, d = p.data, v = p.virtual_stages, cp = p.context;
  // Full fidelity simulates every replica; fast the replicas one_replica keeps (at least one).
  const double r = full ? d : std::clamp(static_cast<double>(scope.replicas), 1.0, d);
  double layers = double(m.num_layers) / (pp * v);  // of the largest chunk
  for (int n : p.pipeline_layers) layers = std::max(layers, double(n));
  const double actors = pp * r * cp * (full ? t : 1);
  const double passes = 2.0 * p.num_microbatches * v;
  // The GPUs an actor stands for: their pipeline, context and data-parallel flows are its own.
  const double ranks = full ? 1 : t;
  // Per pass: its compute, and the transfer it waits for: one flow per rank, a sleep before and
  // after them, and a claim's wait.
  double per_pass = 4 + ranks;
  // TP collectives, per layer (and one layer's worth for the embedding and output): two
  // all-reduces, or with sequence parallelism two all-gathers and two reduce-scatters, and the
  // experts' all-gather and reduce-scatter over an expert-TP group (alltoall or flex
  // dispatcher, expert_tensor_parallel_size > 1).
  const bool routed_tp =
      m.moe() && p.expert_tensor() > 1 && p.moe_dispatcher != MoeDispatcher::kAllGather;
  // Full recomputation runs a layer's forward again inside its backward pass: half as many
  // again per pass (selective recomputation repeats the attention core, whose collectives are
  // the context-parallel ring's).
  const double again = p.recompute == Recompute::kFull ? 1.5 : 1;
  const double ring_again = p.recompute == Recompute::kNone ? 1 : 1.5;
  const double tp_collectives =
      again * (layers + 1) * ((p.sequence_parallel ? 4 : 2) + (routed_tp ? 2 : 0));
  // Fused (fast): timed in closed form inside the pass's compute, no activity of their own (the
  // compute is cut only where a bucket, gather or ring step starts, each counted below with
  // that cut). Else each one: the compute before it, the kernel beside it, a claim's wait,
  // its flows and sleeps. A fast actor's collective is lowered over its group: inside an
  // NVLink island one phase of t ring edges; across islands up to three stages, pipelined
  // into five phases of t edges; under mirrored_tp tensor rank 0's edges only, two a phase.
  // A full-fidelity GPU runs its own share of 2(t - 1) ring steps and their synchronization
  // (measured: GPT-3 t=8 at m=4 ran 4.6M activities at full fidelity).
  const bool tp_in_island =
      p.placement[0] == ParallelDim::kTensor && p.tensor <= c.nvlink.island_size;
  const double tp_flows = full ? 3 * (t - 1) : tp_in_island ? t : 5 * (scope.mirrored_tp ? 2 : t);
  const double tp_sleeps = tp_in_island || full ? 2 : 4;
  // tp_comm_overlap: a ring exchange's t chunks or a pipeline's 4 splits, each a GEMM chunk
  // beside a collective.
  const double chunks = p.tp_comm_overlap ? std::max(t, 4.0) : 1;
  if (t > 1 && !(scope.fused_tp && !full)) {
    per_pass += tp_collectives * chunks * (3 + tp_flows + tp_sleeps);
  }
  // Expert parallelism: per MoE layer a dispatch and a combine over the expert-parallel group,
  // each the compute before it, a kernel beside it, two sleeps and the flows of each GPU the
  // actor stands for: one to each other member (alltoall, flex), two under nic_all_to_all or
  // collapsed_flex, a ring's (allgather: up to five phases, 3(EP - 1) steps at full fidelity).
  if (m.moe() && p.expert_parallel > 1) {
    const double ep = p.expert_parallel;
    const double member_flows = !full && scope.collapsed_all_to_all ? std::min(2.0, ep - 1)
                                : p.moe_dispatcher != MoeDispatcher::kAllGather ? ep - 1
                                : full                                          ? 3 * (ep - 1)
                                                                                : 5;
    per_pass += again * layers * 2 * (4 + ranks * member_flows);
  }
  // Context parallelism: per layer and pass, cp ring steps, each a compute, a flow per rank and
  // two sleeps.
  if (cp > 1) per_pass += ring_again * layers * cp * (3 + ranks);
  // Data-parallel reduction: a bucket per layer at most (and the embedding's and output's),
  // each reduced and gathered once a step, every micro-batch with sharded gradients, and
  // gathered twice more per micro-batch with sharded weights. Each simulated member (every
  // GPU of the simulated replicas' context ranks at full fidelity; a tensor group of them
  // fast, with a flow per rank in each of up to five phases) runs its flows and sleeps and
  // cuts its compute once. Experts reduced apart double it.
  const double buckets = layers * v + 2;
  const double dc = d * cp;
  const double rounds =
      2 * (p.shards_gradients() ? p.num_microbatches : 1.0) * (p.shards_params() ? 3 : 1);
  const double members = pp * r * cp * (full ? t : 1);
  const double per_collective = full ? 2 * (dc - 1) + 3 : 5 * t + 5;
  double dp = dc > 1 ? members * buckets * rounds * per_collective : 0;
  const bool experts_apart = m.moe() && (p.expert_parallel > 1 || p.expert_tensor() != p.tensor);
  if (experts_apart) dp *= 2;
  // And once a step: the optimizer and the waits for the reduction.
  return actors * (passes * per_pass + 4) + dp;
}

std::vector<SpecIssue> simulation_size_issues(const PlanSpec& p, const ClusterSpec& c) {
  std::vector<SpecIssue> issues;
  const std::int64_t gpus =
      checked_mul(checked_mul(checked_mul(p.tensor, p.context), p.pipeline), p.data);
  if (gpus < 0 || gpus > limits::kMaxSimulatedGpus) {
    add(&issues, {"plan.data_parallel", "plan.pipeline_parallel", "plan.tensor_parallel"},
        "plan uses " + str(gpus) + " GPUs, more than the " + str(limits::kMaxSimulatedGpus) +
            " one simulation can hold (the simulated-GPU limit; simulate a slice of the "
            "cluster with fewer data-parallel replicas)");
    return issues;
  }
  const std::int64_t routes = checked_mul(gpus, c.nvlink.island_size);
  if (routes < 0 || routes > limits::kMaxPlatformRoutes) {
    add(&issues, {"plan.data_parallel", "cluster.nvlink.island_size"},
        str(gpus) + " GPUs in NVLink islands of " + str(c.nvlink.island_size) + " need " +
            str(routes) + " routes, more than the platform-route limit of " +
            str(limits::kMaxPlatformRoutes) + " (use fewer GPUs)");
  }
  const std::int64_t per_stage = checked_mul(checked_mul(p.num_microbatches, p.virtual_stages), 2);
  const std::int64_t instructions = checked_mul(p.pipeline, per_stage + 4);
  if (per_stage < 0 || instructions < 0 || instructions > limits::kMaxScheduleInstructions) {
    add(&issues, {"plan.num_microbatches", "plan.global_batch_size", "plan.pipeline_parallel"},
        "the schedule would hold " +
            (instructions < 0 ? std::string("too many") : str(instructions)) +
            " instructions (pipeline_parallel × (num_microbatches × virtual_stages × 2 + 4)), "
            "more than the schedule-instruction limit of " +
            str(limits::kMaxScheduleInstructions) + " (use fewer micro-batches)");
  }
  return issues;
}

std::vector<SpecIssue> activity_limit_issues(const PlanSpec& p, const ModelSpec& m,
                                             const ClusterSpec& c, const SimulatedScope& scope) {
  std::vector<SpecIssue> issues;
  const double activities = estimated_sim_activities(p, m, c, scope);
  if (activities <= limits::kMaxSimActivities) return issues;
  const bool full = scope.full_fidelity;
  const int replicas = full ? p.data : std::clamp(scope.replicas, 1, p.data);
  char text[64];
  std::snprintf(text, sizeof text, "%.3g", activities);
  const bool all = replicas == p.data;
  const std::string actors =
      std::string("pipeline_parallel × ") + (all ? "data_parallel" : str(replicas)) +
      (p.context > 1 ? " × context_parallel" : "") + (full ? " × tensor_parallel" : "") +
      " actors" +
      (all ? ""
           : " (" + str(replicas) + " of " + str(p.data) + " data-parallel replicas simulated)");
  add(&issues, {"plan.num_microbatches", "plan.global_batch_size", "plan.data_parallel"},
      std::string("one step would run about ") + text +
          " simulation activities (about 2 × num_microbatches × virtual_stages passes on " +
          "each of " + actors +
          ", a few per layer each), more than the simulation-activity limit of " +
          str(static_cast<std::int64_t>(limits::kMaxSimActivities)) +
          " (use fewer micro-batches or data-parallel replicas" +
          (full ? ", or --fidelity fast)" : ")"));
  return issues;
}

}  // namespace trident
