#include "report/metric_table.h"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

#include "core/utf8.h"

namespace trident {
namespace {

using Json = nlohmann::ordered_json;

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

std::vector<Metric> make_metrics() {
  using R = Report;
  return {
      {"scenario", "text", "The scenario file (or library name) simulated.", &R::scenario, false},
      {"cluster", "text", "The cluster's name.", &R::cluster, false},
      {"model", "text", "The model's name.", &R::model, false},
      {"schedule", "text", "The pipeline schedule: `1f1b` or `interleaved-1f1b`.", &R::schedule,
       false},
      {"fidelity", "text", "`fast` or `full` (`simulate --fidelity`).", &R::fidelity, false},
      {"step_time_s", "s", "Simulated time of one step (one global batch).", &R::step_time_s},
      {"bubble_fraction", "fraction",
       "Mean over GPUs of (step − compute − exposed communication) / step: waiting on pipeline "
       "neighbours, including the ramp-up and drain of the schedule.",
       &R::bubble_fraction},
      {"ideal_bubble_fraction", "fraction",
       "The schedule's closed form: (p−1)/(m+p−1), or (p−1)/(v·m+p−1) interleaved.",
       &R::ideal_bubble_fraction},
      {"compute_utilization", "fraction", "Mean over GPUs of compute-busy time / step.",
       &R::compute_utilization},
      {"mfu", "fraction", "Model FLOPs (no recompute) / (step × GPUs × the `mfu_peak` dense peak).",
       &R::mfu},
      {"hfu", "fraction",
       "Hardware FLOPs (recompute included) / (step × GPUs × the `mfu_peak` dense peak).", &R::hfu},
      {"model_tflops_per_gpu", "TFLOP/s", "Model FLOPs per second per GPU.",
       &R::model_tflops_per_gpu},
      {"tokens_per_s", "tokens/s", "Global batch × sequence length / step.", &R::tokens_per_s},
      {"tp_comm_exposed_s", "s",
       "Per-GPU mean of the tensor-parallel communication its compute waited on (not hidden "
       "behind compute).",
       &R::tp_comm_exposed_s},
      {"pp_comm_exposed_s", "s",
       "Per-GPU mean of the pipeline sends and receives its compute waited on.",
       &R::pp_comm_exposed_s},
      {"dp_comm_exposed_s", "s",
       "Per-GPU mean of the data-parallel gradient reductions and parameter gathers its "
       "compute waited on.",
       &R::dp_comm_exposed_s},
      {"dp_param_gather_exposed_s", "s",
       "Of `dp_comm_exposed_s`: the waits on parameter all-gathers running behind the compute "
       "(`overlap_param_gather`, `optim_grads_params`).",
       &R::dp_param_gather_exposed_s},
      {"cp_comm_exposed_s", "s",
       "Per-GPU mean of the context-parallel ring transfers the attention blocks beside them "
       "did not hide.",
       &R::cp_comm_exposed_s},
      {"ep_comm_exposed_s", "s",
       "Per-GPU mean of the MoE token dispatch and combine (expert-parallel all-to-all) not "
       "hidden behind compute.",
       &R::ep_comm_exposed_s},
      {"peak_memory_gib", "GiB",
       "The fullest GPU's tensors: weights, gradients, optimizer state, activations in flight "
       "and buffers.",
       &R::peak_memory_gib},
      {"fits_in_memory", "bool", "Whether `memory_margin_gib` >= 0.", &R::fits_in_memory},
      {"memory_margin_gib", "GiB",
       "HBM left on the fullest GPU: GPU memory − `memory_reserved_gib` − `peak_memory_gib` "
       "(negative: it does not fit).",
       &R::memory_margin_gib},
      {"memory_reserved_gib", "GiB",
       "The fullest GPU's reserve: CUDA context, NCCL buffers, userbuffers and workspaces "
       "(`gpu.memory_reserved` when given).",
       &R::memory_reserved_gib},
      {"gpus", "count", "GPUs the plan uses: t × cp × p × d.", &R::gpus},
      {"cluster_gpus", "count", "GPUs of the cluster (a plan may use fewer).", &R::cluster_gpus},
      {"seq_length", "tokens", "The model's sequence length.", &R::seq_length},
      {"tensor_parallel", "count", "t: tensor-parallel size.", &R::tensor},
      {"pipeline_parallel", "count", "p: pipeline stages.", &R::pipeline},
      {"context_parallel", "count", "cp: context-parallel size.", &R::context},
      {"data_parallel", "count", "d: data-parallel size.", &R::data},
      {"expert_parallel", "count", "ep: expert-parallel size (1 for dense models).",
       &R::expert_parallel},
      {"micro_batch_size", "sequences", "Sequences per micro-batch.", &R::micro_batch_size},
      {"global_batch_size", "sequences", "Sequences per step.", &R::global_batch_size},
      {"num_microbatches", "count", "m: micro-batches per pipeline per step.",
       &R::num_microbatches},
      {"model_flops_per_step", "FLOP", "Model FLOPs of one step (no recompute).",
       &R::model_flops_per_step},
      {"hardware_flops_per_step", "FLOP", "FLOPs executed in one step, recompute included.",
       &R::hardware_flops_per_step},
      {"parameters", "count", "The model's parameters.", &R::parameters},
      {"active_params", "count",
       "Parameters one token uses: all but the routed experts it skips (= `parameters` for "
       "dense models).",
       &R::active_params},
      {"mfu_active", "fraction",
       "MFU of Megatron-LM's `num_floating_point_operations` (active experts, causal "
       "attention) against the `mfu_peak` dense peak.",
       &R::mfu_active},
      {"tokens_per_expert_mean", "tokens",
       "MoE: tokens per expert per micro-batch over an expert-parallel group, balanced (0 when "
       "dense).",
       &R::tokens_per_expert_mean},
      {"tokens_per_expert_max", "tokens",
       "MoE: tokens per micro-batch on the busiest expert (`plan.moe_expert_load_imbalance`; 0 "
       "when dense).",
       &R::tokens_per_expert_max},
      {"sim_activities", "count", "SimGrid activities the simulated step took.",
       &R::sim_activities},
      {"train_tokens", "tokens",
       "`plan.train_tokens`: tokens of the whole training run (null, CSV empty, when not "
       "given).",
       &R::train_tokens},
      {"train_days", "days", "Days to train `train_tokens` in whole steps (null when not given).",
       &R::train_days},
      {"gpu_hours", "GPU-hours", "`train_days` × 24 × `gpus` (null when not given).",
       &R::gpu_hours},
      {"cost", "price", "`gpu_hours` × `plan.gpu_hour_price` (null when either is not given).",
       &R::cost},
      {"precision", "text", "The run's precision (`plan.precision`).", &R::precision, false},
      {"attention_backend", "text", "The resolved `plan.attention_backend`.", &R::attention_backend,
       false},
      {"mfu_peak", "text",
       "The dense peak `mfu`, `hfu` and `mfu_active` are measured against: bf16 (fp16 where the "
       "GPU has none), whatever the run precision.",
       &R::mfu_peak, false},
      {"mfu_run_precision", "fraction", "Model FLOPs against the run precision's dense peak.",
       &R::mfu_run_precision, false},
      {"optimizer_offload_exposed_s", "s",
       "Optimizer CPU offload: the optimizer step's wait on the host's copies and CPU step.",
       &R::optimizer_offload_exposed_s, false},
  };
}

}  // namespace

const std::vector<Metric>& report_metrics() {
  static const std::vector<Metric> metrics = make_metrics();
  return metrics;
}

const Metric& find_metric(const std::string& key) {
  for (const Metric& m : report_metrics()) {
    if (key == m.key) return m;
  }
  throw std::out_of_range("no report metric '" + key + "'");
}

Json metric_json(const Metric& m, const Report& r) {
  return std::visit(
      Overloaded{[&](std::optional<double> Report::*f) { return (r.*f) ? Json(*(r.*f)) : Json(); },
                 [&](auto f) { return Json(r.*f); }},
      m.field);
}

void read_metric(const Metric& m, const Json& value, Report* r) {
  std::visit(Overloaded{[&](std::optional<double> Report::*f) {
                          if (value.is_null()) {
                            (r->*f).reset();
                          } else {
                            r->*f = value.get<double>();
                          }
                        },
                        [&](auto f) {
                          using T = std::decay_t<decltype(r->*f)>;
                          r->*f = value.get<T>();
                        }},
             m.field);
}

std::string metric_csv(const Metric& m, const Report& r) {
  return std::visit(
      Overloaded{[&](std::optional<double> Report::*f) {
                   return (r.*f) ? fmt::format("{:.10g}", *(r.*f)) : std::string();
                 },
                 [&](double Report::*f) { return fmt::format("{:.10g}", r.*f); },
                 [&](bool Report::*f) { return std::string(r.*f ? "true" : "false"); },
                 [&](std::string Report::*f) { return report_csv_field(r.*f); },
                 [&](auto f) { return std::to_string(r.*f); }},
      m.field);
}

const std::vector<CommMetric>& comm_metrics() {
  static const std::vector<CommMetric> comms = [] {
    std::vector<CommMetric> out;
    for (const auto& [kind, label] :
         {std::pair{"tp", "exposed TP comm"}, std::pair{"pp", "exposed PP comm"},
          std::pair{"dp", "exposed DP comm"}, std::pair{"cp", "exposed CP comm"},
          std::pair{"ep", "exposed EP comm"}}) {
      const Metric& m = find_metric(std::string(kind) + "_comm_exposed_s");
      out.push_back({kind, label, &m, std::get<double Report::*>(m.field)});
    }
    return out;
  }();
  return comms;
}

std::string report_metrics_markdown() {
  std::string o =
      "# The report\n"
      "\n"
      "<!-- Generated from src/report/metric_table.cc, the one table of report keys; a test\n"
      "     checks it. Regenerate: TRIDENT_WRITE_DOCS=1 build/trident_tests '[report-doc]' -->\n"
      "\n"
      "`trident simulate --format json` writes these keys, in this order, then the objects\n"
      "below. `--format csv` (and each row of `trident sweep`) has the keys marked CSV, in the\n"
      "same order. `trident compare --format json` gives each variant every key, `--format csv`\n"
      "the CSV ones; its table shows the main ones, with CP and EP rows when a variant has\n"
      "context parallelism or experts. `trident plan` reports a subset per plan (docs/plan.md).\n"
      "From Python, `trident.metrics()` lists the same keys, units and docs.\n"
      "\n"
      "| key | unit | CSV | meaning |\n"
      "|---|---|---|---|\n";
  for (const Metric& m : report_metrics()) {
    o += fmt::format("| `{}` | {} | {} | {} |\n", m.key, m.unit, m.csv ? "yes" : "", m.doc);
  }
  o += "\n"
       "Objects (JSON only):\n"
       "\n"
       "- `optimizer_offload` (with `plan.optimizer_cpu_offload`): per GPU of the stage with the\n"
       "  most offloaded parameters, `params_per_gpu`, `d2h_bytes`, `h2d_bytes`, `d2h_s`,\n"
       "  `cpu_step_s`, `h2d_s`, `host_gib_per_gpu`, `overlap`, `pieces`\n"
       "  ([optimizer-offload.md](optimizer-offload.md)).\n"
       "- `stages`: per pipeline stage, `stage`, `first_layer`, `num_layers`; `compute_s` and the\n"
       "  exposed `tp_`, `pp_`, `dp_`, `dp_param_gather_`, `cp_`, `ep_comm_exposed_s`,\n"
       "  `offload_exposed_s`, `bubble_s` (means over the stage's GPUs; they add up to the step);\n"
       "  `memory_gib` = `weights_gib` + `gradients_gib` + `optimizer_gib` + `activations_gib` +\n"
       "  `cp_buffers_gib` + `dispatch_buffers_gib` + `logits_gib`; `allocated_gib` (what\n"
       "  `torch.cuda.max_memory_allocated` reads), `reserved_gib` = `cuda_context_gib` +\n"
       "  `nccl_gib` + `userbuffers_gib` + `workspaces_gib`, `device_gib` (`memory_gib` +\n"
       "  `reserved_gib`, what `nvidia-smi` reads), `microbatches_in_flight`,\n"
       "  `host_optimizer_gib` ([memory.md](memory.md)).\n"
       "- `explain`: where the step goes against the roofline ([explain.md](explain.md)).\n";
  return o;
}

std::string report_csv_field(const std::string& raw) {
  const std::string s = sanitize_utf8(raw);
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c == '\n' ? ' ' : c;
  }
  return q + "\"";
}

}  // namespace trident
