#include "report/explain_writer.h"

#include <fmt/format.h>

#include <cmath>
#include <utility>
#include <vector>

namespace trident {
namespace {

using Json = nlohmann::ordered_json;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

Json optional_json(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

// `part` of `whole`, 0 when there is no whole.
double share(double part, double whole) { return whole > 0 ? part / whole : 0.0; }

// The exposed communication by kind, in the JSON's order: key, table label, seconds.
std::vector<std::pair<const char*, double>> exposed(const Report& r) {
  return {{"tp", r.tp_comm_exposed_s}, {"pp", r.pp_comm_exposed_s},
          {"dp", r.dp_comm_exposed_s}, {"dp_param_gather", r.dp_param_gather_exposed_s},
          {"cp", r.cp_comm_exposed_s}, {"ep", r.ep_comm_exposed_s}};
}

}  // namespace

Json explain_json(const Report& r) {
  const Explain& e = r.explain;
  Json j;
  j["stage"] = e.stage;
  j["compute_s"] = e.compute_s;
  Json compute = Json::array();
  for (const ExplainClass& c : e.compute) {
    compute.push_back({{"class", c.name},
                       {"kernels", static_cast<long long>(std::llround(c.kernels))},
                       {"seconds", c.seconds},
                       {"fraction_of_compute", share(c.seconds, e.compute_s)},
                       {"tflop", c.flops / 1e12},
                       {"hbm_gib", c.bytes / kGiB},
                       {"fraction_of_peak", optional_json(c.fraction_of_peak)},
                       {"fraction_of_hbm_bandwidth", optional_json(c.fraction_of_hbm_bandwidth)}});
  }
  j["compute"] = std::move(compute);
  Json comm;
  for (const auto& [key, seconds] : exposed(r)) {
    comm[key] = {{"seconds", seconds}, {"fraction_of_step", share(seconds, r.step_time_s)}};
  }
  j["exposed_comm"] = std::move(comm);
  j["memory_stage"] = e.memory_stage;
  Json memory;
  if (!r.stages.empty()) {
    const StageReport& s = r.stages[e.memory_stage];
    memory = {{"weights", s.weights_gib},
              {"gradients", s.gradients_gib},
              {"optimizer", s.optimizer_gib},
              {"activations", s.activations_gib},
              {"cp_buffers", s.cp_buffers_gib},
              {"dispatch_buffers", s.dispatch_buffers_gib},
              {"logits", s.logits_gib},
              {"total", s.memory_gib},
              {"allocated", s.allocated_gib},
              {"reserved", r.memory_reserved_gib},
              {"cuda_context", s.cuda_context_gib},
              {"nccl", s.nccl_gib},
              {"userbuffers", s.userbuffers_gib},
              {"workspaces", s.workspaces_gib},
              {"device", s.device_gib}};
  }
  j["memory_gib"] = std::move(memory);
  return j;
}

std::string format_explain_table(const Report& r) {
  const Explain& e = r.explain;
  std::string o = "\n  where the step goes (docs/explain.md)\n";
  o += fmt::format("    compute of stage {} (the busiest), {:.4f} s per step:\n", e.stage,
                   e.compute_s);
  o += fmt::format("      {:<16}{:>10} {:>10} {:>8} {:>16}  {}\n", "class", "kernels", "seconds",
                   "share", "work", "achieved");
  for (const ExplainClass& c : e.compute) {
    if (c.seconds <= 0) continue;
    std::string work, achieved;
    if (c.fraction_of_peak) {
      work = fmt::format("{:.1f} TFLOP", c.flops / 1e12);
      achieved = fmt::format("{:.1f} % of peak", 100 * *c.fraction_of_peak);
    } else if (c.fraction_of_hbm_bandwidth) {
      work = fmt::format("{:.1f} GiB", c.bytes / kGiB);
      achieved = fmt::format("{:.1f} % of HBM", 100 * *c.fraction_of_hbm_bandwidth);
    }
    std::string name = c.name;
    for (char& ch : name) ch = ch == '_' ? ' ' : ch;
    const std::string line =
        fmt::format("      {:<16}{:>10.0f} {:>10.4f} {:>6.1f} % {:>16}  {}", name, c.kernels,
                    c.seconds, 100 * share(c.seconds, e.compute_s), work, achieved);
    o += line.substr(0, line.find_last_not_of(' ') + 1) + "\n";
  }
  // Where the mean GPU's step goes: compute, each exposed kind, the bubble.
  o += fmt::format("    step: compute {:.1f} %", 100 * r.compute_utilization);
  for (const auto& [key, seconds] : exposed(r)) {
    const std::string kind = key;
    if (kind == "dp_param_gather" || (kind == "cp" && r.context == 1) || (kind == "ep" && !r.moe)) {
      continue;
    }
    std::string label = kind;
    for (char& ch : label) ch = static_cast<char>(ch - 'a' + 'A');
    o += fmt::format(", {} {:.1f} %", label, 100 * share(seconds, r.step_time_s));
    if (kind == "dp" && r.dp_param_gather_exposed_s > 0) {
      o += fmt::format(" (param gather {:.1f} %)",
                       100 * share(r.dp_param_gather_exposed_s, r.step_time_s));
    }
  }
  // Optimizer CPU offload: the wait on the host, apart from the bubble (only when offloaded).
  if (r.optimizer_offload) {
    o += fmt::format(", host optimizer {:.1f} %",
                     100 * share(r.optimizer_offload_exposed_s, r.step_time_s));
  }
  o += fmt::format(", bubble {:.1f} %\n", 100 * r.bubble_fraction);
  if (r.stages.empty()) return o;
  const StageReport& s = r.stages[e.memory_stage];
  o += fmt::format(
      "    memory of stage {} (the fullest), GiB: weights {:.1f} + gradients {:.1f} + optimizer "
      "{:.1f} + activations {:.1f}",
      s.stage, s.weights_gib, s.gradients_gib, s.optimizer_gib, s.activations_gib);
  if (s.cp_buffers_gib > 0) o += fmt::format(" + cp buffers {:.1f}", s.cp_buffers_gib);
  if (s.dispatch_buffers_gib > 0) {
    o += fmt::format(" + dispatch buffers {:.1f}", s.dispatch_buffers_gib);
  }
  if (s.logits_gib > 0) o += fmt::format(" + logits {:.1f}", s.logits_gib);
  o += fmt::format(" = {:.1f}\n", s.memory_gib);
  // A given gpu.memory_reserved replaces the computed terms: no breakdown to show.
  const bool computed = s.cuda_context_gib + s.nccl_gib + s.userbuffers_gib + s.workspaces_gib > 0;
  if (computed || s.reserved_gib == 0) {
    o += fmt::format(
        "    torch.cuda.max_memory_allocated ~ {:.1f} (with {:.2f} of cuBLAS workspaces); outside "
        "PyTorch: CUDA context {:.2f} + NCCL {:.2f} + userbuffers {:.2f}; whole GPU {:.1f}\n",
        s.allocated_gib, s.workspaces_gib, s.cuda_context_gib, s.nccl_gib, s.userbuffers_gib,
        s.device_gib);
  } else {
    o += fmt::format("    + {:.1f} reserved (cluster.gpu.memory_reserved); whole GPU {:.1f}\n",
                     s.reserved_gib, s.device_gib);
  }
  return o;
}

}  // namespace trident
