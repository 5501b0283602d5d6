#include "report/writers.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <utility>

#include "report/explain_writer.h"
#include "report/metric_table.h"
#include "report/plan_label.h"

namespace trident {

using Json = nlohmann::ordered_json;

bool parse_report_format(const std::string& name, ReportFormat* out) {
  if (name == "table") {
    *out = ReportFormat::kTable;
  } else if (name == "json") {
    *out = ReportFormat::kJson;
  } else if (name == "csv") {
    *out = ReportFormat::kCsv;
  } else {
    return false;
  }
  return true;
}

std::string format_report(const Report& r, ReportFormat format) {
  switch (format) {
    case ReportFormat::kJson:
      return format_json(r);
    case ReportFormat::kCsv:
      return csv_header() + csv_row(r);
    case ReportFormat::kTable:
      break;
  }
  return format_table(r);
}

std::string format_json(const Report& r) {
  Json j;
  for (const Metric& m : report_metrics()) j[m.key] = metric_json(m, r);
  if (r.optimizer_offload) {
    const OptimizerOffload& o = *r.optimizer_offload;
    j["optimizer_offload"] = {{"params_per_gpu", o.params},
                              {"d2h_bytes", o.d2h_bytes},
                              {"h2d_bytes", o.h2d_bytes},
                              {"d2h_s", o.d2h_s},
                              {"cpu_step_s", o.cpu_s},
                              {"h2d_s", o.h2d_s},
                              {"host_gib_per_gpu", o.host_bytes / (1ull << 30)},
                              {"overlap", o.overlap},
                              {"pieces", o.pieces}};
  }
  Json stages = Json::array();
  for (const StageReport& s : r.stages) {
    stages.push_back({{"stage", s.stage},
                      {"first_layer", s.first_layer},
                      {"num_layers", s.num_layers},
                      {"compute_s", s.compute_s},
                      {"tp_comm_exposed_s", s.tp_comm_exposed_s},
                      {"pp_comm_exposed_s", s.pp_comm_exposed_s},
                      {"dp_comm_exposed_s", s.dp_comm_exposed_s},
                      {"dp_param_gather_exposed_s", s.dp_param_gather_exposed_s},
                      {"cp_comm_exposed_s", s.cp_comm_exposed_s},
                      {"ep_comm_exposed_s", s.ep_comm_exposed_s},
                      {"offload_exposed_s", s.offload_exposed_s},
                      {"bubble_s", s.bubble_s},
                      {"memory_gib", s.memory_gib},
                      {"weights_gib", s.weights_gib},
                      {"gradients_gib", s.gradients_gib},
                      {"optimizer_gib", s.optimizer_gib},
                      {"activations_gib", s.activations_gib},
                      {"cp_buffers_gib", s.cp_buffers_gib},
                      {"dispatch_buffers_gib", s.dispatch_buffers_gib},
                      {"logits_gib", s.logits_gib},
                      {"allocated_gib", s.allocated_gib},
                      {"reserved_gib", s.reserved_gib},
                      {"cuda_context_gib", s.cuda_context_gib},
                      {"nccl_gib", s.nccl_gib},
                      {"userbuffers_gib", s.userbuffers_gib},
                      {"workspaces_gib", s.workspaces_gib},
                      {"device_gib", s.device_gib},
                      {"microbatches_in_flight", s.microbatches_in_flight},
                      {"host_optimizer_gib", s.host_optimizer_gib}});
  }
  j["stages"] = std::move(stages);
  j["explain"] = explain_json(r);  // where the step goes (docs/explain.md)
  // Names may hold bytes that are not UTF-8: replaced (U+FFFD), never a failed dump.
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string csv_header() {
  std::string out;
  for (const Metric& m : report_metrics()) {
    if (m.csv) out += (out.empty() ? "" : ",") + std::string(m.key);
  }
  return out + "\n";
}

std::string csv_row(const Report& r) {
  std::string out;
  bool first = true;
  for (const Metric& m : report_metrics()) {
    if (!m.csv) continue;
    if (!first) out += ",";
    first = false;
    out += metric_csv(m, r);
  }
  return out + "\n";
}

std::string format_table(const Report& r) {
  std::string o;
  auto line = [&o](const std::string& k, const std::string& v) {
    o += fmt::format("  {:<26}{}\n", k, v);
  };
  o += fmt::format("trident: {} on {} ({})\n", r.model, r.cluster, r.scenario);
  // cp and its columns only with context parallelism: other reports read as before.
  const bool cp = r.context > 1;
  o += fmt::format(
      "  plan: {} ({} of {} GPUs), seq {}, micro-batch {}, global batch {}, {} "
      "micro-batches, {}, {}, fidelity {}\n\n",
      plan_label(r), r.gpus, r.cluster_gpus, r.seq_length, r.micro_batch_size, r.global_batch_size,
      r.num_microbatches, r.schedule, r.precision, r.fidelity);
  line("precision", fmt::format("{}, attention {}", r.precision, r.attention_backend));
  line("step time", fmt::format("{:.4f} s", r.step_time_s));
  line("tokens/s", fmt::format("{:.0f}", r.tokens_per_s));
  line("MFU", r.mfu_peak == r.precision
                  ? fmt::format("{:.1f} % (of the {} dense peak)", 100 * r.mfu, r.mfu_peak)
                  : fmt::format("{:.1f} % (of the {} dense peak; {:.1f} % of {})", 100 * r.mfu,
                                r.mfu_peak, 100 * r.mfu_run_precision, r.precision));
  line("HFU", fmt::format("{:.1f} %", 100 * r.hfu));
  line("model TFLOP/s per GPU", fmt::format("{:.1f}", r.model_tflops_per_gpu));
  line("compute utilization", fmt::format("{:.1f} %", 100 * r.compute_utilization));
  // The formula of the ideal bubble the schedule has: interleaving divides it by v.
  line("bubble", fmt::format("{:.1f} % (ideal {} = {:.1f} %)", 100 * r.bubble_fraction,
                             r.virtual_stages > 1 ? "(p-1)/(v·m+p-1)" : "(p-1)/(m+p-1)",
                             100 * r.ideal_bubble_fraction));
  line("exposed TP comm", fmt::format("{:.4f} s", r.tp_comm_exposed_s));
  line("exposed PP comm", fmt::format("{:.4f} s", r.pp_comm_exposed_s));
  line("exposed DP comm", fmt::format("{:.4f} s", r.dp_comm_exposed_s));
  // Only where parameters are gathered behind the compute, so other tables stay as they were.
  if (r.dp_param_gather_exposed_s > 0) {
    line("  of which param gather", fmt::format("{:.4f} s", r.dp_param_gather_exposed_s));
  }
  if (cp) line("exposed CP comm", fmt::format("{:.4f} s", r.cp_comm_exposed_s));
  if (r.moe) {
    line("exposed EP comm",
         fmt::format("{:.4f} s (EP = {})", r.ep_comm_exposed_s, r.expert_parallel));
    line("active parameters",
         fmt::format("{:.2f}B of {:.2f}B", r.active_params / 1e9, r.parameters / 1e9));
    line("MFU (Megatron, active)", fmt::format("{:.1f} %", 100 * r.mfu_active));
    line("tokens per expert", fmt::format("{:.0f} mean, {:.0f} busiest (per micro-batch)",
                                          r.tokens_per_expert_mean, r.tokens_per_expert_max));
  }
  if (r.optimizer_offload) {
    const OptimizerOffload& o = *r.optimizer_offload;
    line("optimizer CPU offload",
         fmt::format("{:.4f} s exposed; per GPU {:.2f}B params, D2H {:.2f} GB in {:.3f} s, CPU "
                     "Adam {:.3f} s, H2D {:.2f} GB in {:.3f} s{}, host {:.1f} GiB",
                     r.optimizer_offload_exposed_s, o.params / 1e9, o.d2h_bytes / 1e9, o.d2h_s,
                     o.cpu_s, o.h2d_bytes / 1e9, o.h2d_s,
                     o.overlap ? fmt::format(", {} pieces overlapped", o.pieces) : "",
                     o.host_bytes / (1ull << 30)));
  }
  line("peak memory",
       fmt::format("{:.1f} GiB + {:.1f} GiB reserved of {:.1f} GiB ({}, margin {:.1f} GiB)",
                   r.peak_memory_gib, r.memory_reserved_gib,
                   r.peak_memory_gib + r.memory_reserved_gib + r.memory_margin_gib,
                   r.fits_in_memory ? "fits" : "DOES NOT FIT", r.memory_margin_gib));
  if (r.train_days) {
    line("time to train",
         fmt::format("{:.1f} days for {:.4g} tokens", *r.train_days, r.train_tokens.value_or(0)));
    line("GPU-hours", fmt::format("{:.0f} ({} GPUs)", r.gpu_hours.value_or(0), r.gpus));
  }
  if (r.cost) line("cost", fmt::format("{:.0f}", *r.cost));
  o += fmt::format("\n  {:>5} {:>7} {:>10} {:>9} {:>9} {:>9}{} {:>9} {:>10}", "stage", "layers",
                   "compute s", "TP s", "PP s", "DP s", cp ? fmt::format(" {:>9}", "CP s") : "",
                   "bubble s", "mem GiB");
  o += r.moe ? fmt::format(" {:>9}\n", "EP s") : "\n";
  for (const StageReport& s : r.stages) {
    o += fmt::format("  {:>5} {:>7} {:>10.4f} {:>9.4f} {:>9.4f} {:>9.4f}{} {:>9.4f} {:>10.1f}",
                     s.stage, s.num_layers, s.compute_s, s.tp_comm_exposed_s, s.pp_comm_exposed_s,
                     s.dp_comm_exposed_s, cp ? fmt::format(" {:>9.4f}", s.cp_comm_exposed_s) : "",
                     s.bubble_s, s.memory_gib);
    o += r.moe ? fmt::format(" {:>9.4f}\n", s.ep_comm_exposed_s) : "\n";
  }
  return o + format_explain_table(r);
}

}  // namespace trident
