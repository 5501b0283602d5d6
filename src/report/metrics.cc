#include "report/metrics.h"

#include <algorithm>
#include <cmath>

#include "layout/program.h"

namespace trident {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// `x`, or exactly +0.0 when it is negative or -0.0: idle time and exposed communication are
// differences of accumulated times, whose rounding can leave -1e-17 where nothing happened.
double non_negative(double x) { return x > 0 ? x : 0.0; }
// The idle time of a step: what is left of `step` after compute and exposed communication,
// 0 when that is a rounding residue of the sums (below 1e-12 of the step), never negative.
double idle_residue(double idle, double step) { return idle > 1e-12 * step ? idle : 0.0; }

// The explain section: the busiest stage's compute classes (the workload's), the fullest
// stage's index; stages already hold their compute_s and memory terms.
Explain make_explain(const Workload& w, const std::vector<StageReport>& stages) {
  Explain e;
  if (stages.empty()) return e;
  double peak_memory = -1;
  for (const StageReport& s : stages) {
    if (s.compute_s > stages[e.stage].compute_s) e.stage = s.stage;
    if (s.device_gib > peak_memory) {
      peak_memory = s.device_gib;
      e.memory_stage = s.stage;
    }
  }
  e.compute_s = stages[e.stage].compute_s;
  const ComputeClasses& classes = w.stages[e.stage].compute;
  for (int i = 0; i < kOpClassCount; ++i) {
    const OpClass c = static_cast<OpClass>(i);
    const OpClassTotals& t = classes[c];
    ExplainClass x;
    x.name = op_class_name(c);
    x.kernels = t.kernels;
    x.seconds = t.seconds;
    x.flops = t.flops;
    x.bytes = t.bytes;
    if (c != OpClass::kKernelOverhead && c != OpClass::kHostWait && t.seconds > 0) {
      if (memory_bound(c) && t.peak_bytes > 0) x.fraction_of_hbm_bandwidth = t.bytes / t.peak_bytes;
      if (!memory_bound(c) && t.peak_flops > 0) x.fraction_of_peak = t.flops / t.peak_flops;
    }
    e.compute.push_back(std::move(x));
  }
  return e;
}

}  // namespace

Report make_report(const Scenario& sc, const Workload& w, const Timeline& tl,
                   const std::string& fidelity) {
  const PlanSpec& plan = sc.plan;
  Report r;
  r.scenario = sc.path;
  r.cluster = sc.cluster.name;
  r.model = sc.model.name;
  r.schedule = schedule_name(plan.schedule);
  r.fidelity = fidelity;
  r.precision = precision_name(plan.precision);
  r.attention_backend = attention_backend_name(
      resolve_attention_backend(plan.attention_backend, sc.cluster.gpu.architecture));
  r.tensor = plan.tensor;
  r.pipeline = plan.pipeline;
  r.data = plan.data;
  r.context = plan.context;
  r.gpus = plan.gpus();
  r.cluster_gpus = sc.cluster.total_gpus();
  r.seq_length = sc.model.seq_length;
  r.micro_batch_size = plan.micro_batch_size;
  r.global_batch_size = plan.global_batch_size;
  r.num_microbatches = plan.num_microbatches;
  r.virtual_stages = plan.virtual_stages;
  r.step_time_s = tl.step_time_s;
  r.ideal_bubble_fraction = ideal_bubble_fraction(plan);
  r.model_flops_per_step = w.model_flops_per_step;
  r.hardware_flops_per_step = w.hardware_flops_per_step;
  r.parameters = w.total_params;
  r.active_params = w.active_params;
  r.tokens_per_expert_mean = w.tokens_per_expert_mean;
  r.tokens_per_expert_max = w.tokens_per_expert_max;
  r.moe = sc.model.moe();
  r.expert_parallel = r.moe ? plan.expert_parallel : 1;
  r.sim_activities = tl.activities;

  const double step = tl.step_time_s;
  std::vector<double> stage_gpus(plan.pipeline, 0.0);
  r.stages.resize(plan.pipeline);
  double gpus = 0, compute = 0, bubble = 0, tp = 0, pp = 0, dp = 0, gather = 0, cp = 0, ep = 0;
  double offload = 0;
  for (const ActorTimeline& a : tl.actors) {
    const double g = a.gpus;
    const double idle =
        idle_residue(step - a.compute_s - a.tp_exposed_s - a.pp_exposed_s - a.dp_exposed_s -
                         a.cp_exposed_s - a.ep_exposed_s - a.offload_exposed_s,
                     step);
    offload += g * a.offload_exposed_s;
    r.stages[a.stage].offload_exposed_s += g * a.offload_exposed_s;
    ep += g * a.ep_exposed_s;
    gpus += g;
    compute += g * a.compute_s;
    bubble += g * idle;
    tp += g * a.tp_exposed_s;
    pp += g * a.pp_exposed_s;
    dp += g * a.dp_exposed_s;
    gather += g * a.param_gather_exposed_s;
    cp += g * a.cp_exposed_s;
    StageReport& s = r.stages[a.stage];
    stage_gpus[a.stage] += g;
    s.compute_s += g * a.compute_s;
    s.tp_comm_exposed_s += g * a.tp_exposed_s;
    s.pp_comm_exposed_s += g * a.pp_exposed_s;
    s.dp_comm_exposed_s += g * a.dp_exposed_s;
    s.dp_param_gather_exposed_s += g * a.param_gather_exposed_s;
    s.cp_comm_exposed_s += g * a.cp_exposed_s;
    s.ep_comm_exposed_s += g * a.ep_exposed_s;
    s.bubble_s += g * idle;
  }
  if (gpus > 0 && step > 0) {
    r.compute_utilization = compute / gpus / step;
    r.bubble_fraction = non_negative(bubble / gpus / step);
    r.tp_comm_exposed_s = non_negative(tp / gpus);
    r.pp_comm_exposed_s = non_negative(pp / gpus);
    r.dp_comm_exposed_s = non_negative(dp / gpus);
    r.dp_param_gather_exposed_s = non_negative(gather / gpus);
    r.cp_comm_exposed_s = non_negative(cp / gpus);
    r.ep_comm_exposed_s = non_negative(ep / gpus);
    r.optimizer_offload_exposed_s = non_negative(offload / gpus);
    // MFU keeps Megatron's model-FLOPs formula and is measured against the BF16 dense peak
    // (FP16 where a GPU file has no BF16), whatever the run precision; mfu_run_precision is
    // against the run precision's own peak.
    Precision base = plan.precision;
    for (Precision p : {Precision::kFp16, Precision::kBf16}) {
      if (sc.cluster.gpu.peak_flops.count(p) != 0) base = p;
    }
    const double peak = sc.cluster.peak(base);
    r.mfu_peak = precision_name(base);
    r.mfu = w.model_flops_per_step / (step * r.gpus * peak);
    r.hfu = w.hardware_flops_per_step / (step * r.gpus * peak);
    r.mfu_active = w.megatron_flops_per_step / (step * r.gpus * peak);
    r.mfu_run_precision =
        w.model_flops_per_step / (step * r.gpus * sc.cluster.peak(plan.precision));
    r.model_tflops_per_gpu = w.model_flops_per_step / step / r.gpus / 1e12;
    r.tokens_per_s = double(plan.global_batch_size) * sc.model.seq_length / step;
    if (plan.train_tokens > 0) {
      // Whole steps: the last global batch is trained in full.
      const double tokens_per_step = double(plan.global_batch_size) * sc.model.seq_length;
      const double seconds = std::ceil(plan.train_tokens / tokens_per_step) * step;
      r.train_tokens = plan.train_tokens;
      r.train_days = seconds / 86400;
      r.gpu_hours = seconds / 3600 * r.gpus;
      if (plan.has_gpu_hour_price) r.cost = *r.gpu_hours * plan.gpu_hour_price;
    }
  }
  for (int i = 0; i < plan.pipeline; ++i) {
    StageReport& s = r.stages[i];
    const StageWork& work = w.stages[i];
    const double g = stage_gpus[i] > 0 ? stage_gpus[i] : 1;
    s.stage = i;
    s.first_layer = work.chunks.front().first_layer;
    s.num_layers = work.num_layers;
    s.compute_s /= g;
    s.tp_comm_exposed_s = non_negative(s.tp_comm_exposed_s / g);
    s.pp_comm_exposed_s = non_negative(s.pp_comm_exposed_s / g);
    s.dp_comm_exposed_s = non_negative(s.dp_comm_exposed_s / g);
    s.dp_param_gather_exposed_s = non_negative(s.dp_param_gather_exposed_s / g);
    s.cp_comm_exposed_s = non_negative(s.cp_comm_exposed_s / g);
    s.ep_comm_exposed_s = non_negative(s.ep_comm_exposed_s / g);
    s.offload_exposed_s = non_negative(s.offload_exposed_s / g);
    s.host_optimizer_gib = work.memory.host_optimizer / kGiB;
    if (work.offload.active &&
        (!r.optimizer_offload || work.offload.params > r.optimizer_offload->params)) {
      r.optimizer_offload = work.offload;
    }
    s.bubble_s = non_negative(s.bubble_s / g);
    s.weights_gib = work.memory.weights / kGiB;
    s.gradients_gib = work.memory.gradients / kGiB;
    s.optimizer_gib = work.memory.optimizer / kGiB;
    s.activations_gib = work.memory.activations / kGiB;
    s.cp_buffers_gib = work.memory.cp_buffers / kGiB;
    s.dispatch_buffers_gib = work.memory.dispatch_buffers / kGiB;
    s.logits_gib = work.memory.logits_transient / kGiB;
    s.memory_gib = work.memory.total() / kGiB;
    s.allocated_gib = work.memory.allocated() / kGiB;
    const ReservedMemory& reserve = work.memory.reserved;
    s.cuda_context_gib = reserve.cuda_context / kGiB;
    s.nccl_gib = reserve.nccl / kGiB;
    s.userbuffers_gib = reserve.userbuffers / kGiB;
    s.workspaces_gib = reserve.workspaces / kGiB;
    s.reserved_gib = reserve.total() / kGiB;
    s.device_gib = work.memory.device_total() / kGiB;
    s.microbatches_in_flight = work.memory.microbatches_in_flight;
  }
  r.explain = make_explain(w, r.stages);
  // The fullest GPU (its tensors and its reserve) gives the peak and the reserve shown.
  if (!r.stages.empty()) {
    r.peak_memory_gib = r.stages[r.explain.memory_stage].memory_gib;
    r.memory_reserved_gib = r.stages[r.explain.memory_stage].reserved_gib;
  }
  r.memory_margin_gib = memory_margin_bytes(sc.cluster, w) / kGiB;
  r.fits_in_memory = r.memory_margin_gib >= 0;
  return r;
}

}  // namespace trident
