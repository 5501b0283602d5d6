#include "cli/plan_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/plan_merge.h"
#include "cli/sweep_csv.h"

namespace trident {
namespace {

using Json = nlohmann::ordered_json;

// Busy compute of a plan's mean GPU, as the report measured it.
double compute_part(const Report& r) { return r.step_time_s * r.compute_utilization; }

// "FIELD A vs B, ..." for the searched fields whose values differ (derived ones left out).
std::string differing_fields(const std::vector<std::string>& a_set,
                             const std::vector<std::string>& b_set) {
  auto split = [](const std::vector<std::string>& set) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const std::string& o : set) {
      const size_t eq = o.find('=');
      if (eq != std::string::npos) out.emplace_back(o.substr(0, eq), o.substr(eq + 1));
    }
    return out;
  };
  const auto a = split(a_set), b = split(b_set);
  auto value_of = [](const std::vector<std::pair<std::string, std::string>>& set,
                     const std::string& key) {
    for (const auto& [k, v] : set) {
      if (k == key) return v;
    }
    return std::string();
  };
  // Experts split like the dense layers in both: expert_tensor_parallel_size follows t.
  const std::string tp = "plan.tensor_parallel", etp = "plan.expert_tensor_parallel_size";
  const bool etp_follows_t =
      value_of(a, etp) == value_of(a, tp) && value_of(b, etp) == value_of(b, tp);
  std::string out;
  for (const auto& [key, value] : a) {
    if (key == "plan.distributed_optimizer" || key == "plan.data_parallel" ||
        key == "plan.num_microbatches" || key == "plan.pipeline_layers" ||
        (key == etp && etp_follows_t)) {
      continue;  // derived from the searched fields
    }
    // A copy: C++17 lambdas cannot capture a structured binding (clang refuses it).
    const std::string& wanted = key;
    const auto other =
        std::find_if(b.begin(), b.end(), [&](const auto& kv) { return kv.first == wanted; });
    if (other == b.end() || other->second == value) continue;
    const std::string name = key.compare(0, 5, "plan.") == 0 ? key.substr(5) : key;
    out += (out.empty() ? "" : ", ") + name + " " + value + " vs " + other->second;
  }
  return out;
}

std::string fixed(double v, int digits) { return fmt::format("{:.{}f}", v, digits); }

}  // namespace

const std::vector<const Metric*>& plan_metrics() {
  static const std::vector<const Metric*> metrics = [] {
    std::vector<const Metric*> out;
    for (const char* key :
         {"step_time_s", "tokens_per_s", "mfu", "peak_memory_gib", "memory_margin_gib",
          "tp_comm_exposed_s", "pp_comm_exposed_s", "dp_comm_exposed_s", "cp_comm_exposed_s",
          "ep_comm_exposed_s", "bubble_fraction", "compute_utilization"}) {
      out.push_back(&find_metric(key));
    }
    return out;
  }();
  return metrics;
}

std::string encode_plan_metrics(const Report& r) {
  std::string line;
  for (const Metric* m : plan_metrics()) {
    // Shortest text that reads back exactly.
    line += (line.empty() ? "" : " ") + metric_json(*m, r).dump();
  }
  return line;
}

bool decode_plan_metrics(const std::string& text, PlanResult* out) {
  std::istringstream in(text);
  Report r;
  for (const Metric* m : plan_metrics()) {
    std::string word;
    if (!(in >> word)) return false;
    const Json value = Json::parse(word, nullptr, /*allow_exceptions=*/false);
    if (!value.is_number()) return false;
    read_metric(*m, value, &r);
  }
  std::string rest;
  if (in >> rest) return false;
  out->report = r;
  return true;
}

void read_plan_metrics(const Json& plan, PlanResult* out) {
  for (const Metric* m : plan_metrics()) read_metric(*m, plan.at(m->key), &out->report);
}

std::string why_winner(const std::vector<PlanResult>& ranked) {
  if (ranked.size() < 2) return "";
  return why_line(ranked[0], candidate_overrides(ranked[0].candidate), ranked[1],
                  candidate_overrides(ranked[1].candidate));
}

std::string why_line(const PlanResult& plan_a, const std::vector<std::string>& a_set,
                     const PlanResult& plan_b, const std::vector<std::string>& b_set) {
  const Report &a = plan_a.report, &b = plan_b.report;
  const double gain = b.step_time_s - a.step_time_s;
  struct Part {
    std::string name;
    double saved;  // runner-up minus winner, seconds
  };
  std::vector<Part> parts = {
      {"compute", compute_part(b) - compute_part(a)},
      {"bubble", b.step_time_s * b.bubble_fraction - a.step_time_s * a.bubble_fraction}};
  for (const CommMetric& c : comm_metrics()) {
    // "exposed TP", ..., "exposed EP"
    const std::string label = c.label;
    parts.push_back({label.substr(0, label.rfind(' ')), b.*c.seconds - a.*c.seconds});
  }
  std::stable_sort(parts.begin(), parts.end(),
                   [](const Part& x, const Part& y) { return x.saved > y.saved; });
  std::string line = fmt::format("#1 is {:.4f} s ({:.1f} %) faster than #2", gain,
                                 b.step_time_s > 0 ? 100 * gain / b.step_time_s : 0.0);
  const std::string fields = differing_fields(a_set, b_set);
  if (!fields.empty()) line += " (" + fields + ")";
  std::string reasons;
  for (const Part& p : parts) {
    if (p.saved <= 1e-4 * b.step_time_s) continue;
    reasons += (reasons.empty() ? "" : ", ") + fmt::format("{} −{:.4f} s", p.name, p.saved);
    if (reasons.size() > 60) break;
  }
  std::string costs;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (it->saved >= -1e-4 * b.step_time_s) break;
    costs = fmt::format("{} +{:.4f} s", it->name, -it->saved);
    break;
  }
  if (!reasons.empty()) line += ": " + reasons;
  if (!costs.empty()) line += " (it pays " + costs + ")";
  return line;
}

std::string unproven_note(const PlanSearchOutput& out) {
  if (out.interrupted_by != 0) {
    return fmt::format(
        "not proven: interrupted (signal {}) after {} simulations; these are the best of them, "
        "and the {} plans not simulated have step lower bounds of at least {} s",
        out.interrupted_by, out.simulated, out.fitting - out.simulated,
        fixed(out.unproven_bound_s, 4));
  }
  return fmt::format(
      "not proven: --max-simulations {} reached; the {} unsimulated plans have step lower bounds "
      "of at least {} s, so none of them can beat that",
      out.max_simulations, out.fitting - out.simulated, fixed(out.unproven_bound_s, 4));
}

std::string format_plan_search(const PlanSearchOutput& out, ReportFormat format) {
  const SpaceSummary& s = out.summary;
  const std::vector<SearchDimension>& dims = search_dimensions();
  const bool by_time = !out.ranked.empty() && out.ranked.front().time_to_train_s >= 0;
  if (format == ReportFormat::kJson) {
    nlohmann::ordered_json j;
    j["title"] = out.title;
    nlohmann::ordered_json c;
    c["enumerated"] = s.enumerated;
    c["pruned_by_memory"] = s.pruned_by_memory;
    c["fitting"] = out.fitting;
    // Unproven: what was left unsimulated is not known to be slower.
    c["pruned_by_bound"] = out.proven ? out.fitting - out.simulated : 0;
    if (!out.proven) c["not_simulated"] = out.fitting - out.simulated;
    c["simulated"] = out.simulated;
    c["failed"] = out.failed;
    j["proven"] = out.proven;
    if (!out.proven) {
      j["max_simulations"] = out.max_simulations;
      j["unsimulated_lower_bound_s"] = out.unproven_bound_s;
    }
    nlohmann::ordered_json rules = nlohmann::ordered_json::object();
    for (const auto& [rule, n] : s.enumeration.pruned) rules[rule] = n;
    c["pruned_by_rule"] = rules;
    j["candidates"] = c;
    auto plan_json = [&](const PlanResult& r) {
      nlohmann::ordered_json p;
      p["plan"] = candidate_label(r.candidate);
      p["set"] = candidate_overrides(r.candidate);
      for (const Metric* m : plan_metrics()) {
        p[m->key] = metric_json(*m, r.report);
        if (m == plan_metrics().front()) p["step_lower_bound_s"] = r.bound_s;
      }
      if (r.time_to_train_s >= 0) p["time_to_train_s"] = r.time_to_train_s;
      return p;
    };
    nlohmann::ordered_json plans = nlohmann::ordered_json::array();
    for (const PlanResult& r : out.ranked) plans.push_back(plan_json(r));
    j["plans"] = plans;
    j["why"] = why_winner(out.ranked);
    if (out.given) j["given_plan"] = plan_json(*out.given);
    if (out.shard_count > 1) {
      // What `trident merge` needs to rebuild the unsharded output (cli/plan_json_merge.h).
      nlohmann::ordered_json sh;
      sh["index"] = out.shard_index;
      sh["count"] = out.shard_count;
      sh["top"] = out.top;
      sh["fingerprint"] = out.fingerprint;
      nlohmann::ordered_json indices = nlohmann::ordered_json::array();
      for (const PlanResult& r : out.ranked) indices.push_back(r.index);
      sh["plan_indices"] = indices;
      nlohmann::ordered_json proving = nlohmann::ordered_json::array();
      for (const PlanShardEntry& e : out.proving) {
        proving.push_back({e.index, e.bound_s, nullptr});
        if (std::isfinite(e.step_s)) proving.back()[2] = e.step_s;  // null: it failed
      }
      sh["proving"] = proving;
      sh["after_prefix"] = nullptr;
      if (out.after_prefix) {
        sh["after_prefix"] = {out.after_prefix->index, out.after_prefix->bound_s};
      }
      j["shard"] = sh;
    }
    return j.dump(2) + "\n";
  }
  if (format == ReportFormat::kCsv) {
    std::string text = "rank,plan";
    for (const SearchDimension& d : dims) text += "," + d.key;
    text += ",plan.data_parallel,plan.num_microbatches,plan.pipeline_layers";
    for (const Metric* m : plan_metrics()) {
      text += "," + std::string(m->key);
      if (m == plan_metrics().front()) text += ",step_lower_bound_s";
    }
    if (by_time) text += ",time_to_train_s";
    text += "\n";
    auto row = [&](const std::string& rank, const PlanResult& r) {
      std::string line = rank + "," + csv_field(candidate_label(r.candidate));
      for (const std::string& v : r.candidate.values) line += "," + csv_field(v);
      std::string layers;
      for (int n : r.candidate.plan.pipeline_layers) {
        layers += (layers.empty() ? "[" : ", ") + std::to_string(n);
      }
      if (!layers.empty()) layers += "]";
      line += fmt::format(",{},{},{}", r.candidate.plan.data, r.candidate.plan.num_microbatches,
                          csv_field(layers));
      for (const Metric* m : plan_metrics()) {
        line += "," + metric_csv(*m, r.report);
        if (m == plan_metrics().front()) line += fmt::format(",{:.10g}", r.bound_s);
      }
      if (by_time) line += fmt::format(",{:.10g}", r.time_to_train_s);
      return line + "\n";
    };
    for (size_t i = 0; i < out.ranked.size(); ++i)
      text += row(std::to_string(i + 1), out.ranked[i]);
    if (out.given) text += row("given", *out.given);
    if (out.shard_count > 1) {
      std::vector<PlanShardRow> rows;
      for (size_t i = 0; i < out.ranked.size(); ++i) {
        const PlanResult& r = out.ranked[i];
        rows.push_back({static_cast<int>(i + 1), r.index, r.report.step_time_s, r.bound_s});
      }
      text += plan_shard_trailer(out.shard_index, out.shard_count, out.top, out.fingerprint, rows);
    }
    return text;
  }
  std::string text = "trident plan: " + out.title + "\n";
  text += fmt::format(
      "  {} candidates, {} do not fit in memory, {} bounded, {} simulated ({} {})\n\n",
      s.enumerated, s.pruned_by_memory, out.fitting, out.simulated, out.fitting - out.simulated,
      out.proven ? "pruned by the step lower bound" : "not simulated");
  if (!out.proven) text += "  " + unproven_note(out) + "\n\n";
  std::vector<std::string> labels;
  size_t width = 4;
  for (const PlanResult& r : out.ranked) {
    labels.push_back(candidate_label(r.candidate));
    width = std::max(width, labels.back().size());
  }
  if (out.given) width = std::max(width, candidate_label(out.given->candidate).size());
  text += fmt::format(
      "  {:>5}  {:<{}}  {:>9} {:>9} {:>10} {:>6} {:>8} {:>7} {:>8} {:>8} {:>8} {:>8} {:>8} "
      "{:>7}\n",
      "rank", "plan", width, "step s", "bound s", "tokens/s", "MFU %", "mem GiB", "margin", "TP s",
      "PP s", "DP s", "CP s", "EP s", "bubble");
  auto line = [&](const std::string& rank, const PlanResult& plan) {
    const Report& r = plan.report;
    return fmt::format(
        "  {:>5}  {:<{}}  {:>9} {:>9} {:>10.0f} {:>6.1f} {:>8.1f} {:>7.1f} {:>8} {:>8} {:>8} "
        "{:>8} {:>8} {:>6.1f}%\n",
        rank, candidate_label(plan.candidate), width, fixed(r.step_time_s, 4),
        fixed(plan.bound_s, 4), r.tokens_per_s, 100 * r.mfu, r.peak_memory_gib, r.memory_margin_gib,
        fixed(r.tp_comm_exposed_s, 4), fixed(r.pp_comm_exposed_s, 4), fixed(r.dp_comm_exposed_s, 4),
        fixed(r.cp_comm_exposed_s, 4), fixed(r.ep_comm_exposed_s, 4), 100 * r.bubble_fraction);
  };
  for (size_t i = 0; i < out.ranked.size(); ++i) text += line(std::to_string(i + 1), out.ranked[i]);
  if (out.ranked.empty()) {
    // The binding rule, always: without it "no plan fits" cannot be acted on.
    const std::string why = out.fitting == 0 ? no_fit_reason(s) : "";
    text += "  (no plan fits" + (why.empty() ? std::string() : ": " + why) + ")\n";
  }
  if (out.given) text += line("given", *out.given);
  if (by_time) {
    // --objective time-to-train: what the rows are ranked by.
    text += "\n  expected time to train (failures, checkpoints, restarts; docs/goodput.md):\n";
    for (size_t i = 0; i < out.ranked.size(); ++i) {
      text += fmt::format("  {:>5}  {:.3f} days\n", i + 1, out.ranked[i].time_to_train_s / 86400);
    }
    if (out.given && out.given->time_to_train_s >= 0) {
      text += fmt::format("  {:>5}  {:.3f} days\n", "given", out.given->time_to_train_s / 86400);
    }
  }
  const std::string why = why_winner(out.ranked);
  if (!why.empty()) text += "\n  " + why + "\n";
  if (!out.ranked.empty()) {
    text += "\n  run #1: trident simulate SCENARIO";
    for (const std::string& o : candidate_overrides(out.ranked.front().candidate)) {
      text += " --set " + (o.find(' ') == std::string::npos ? o : "'" + o + "'");
    }
    text += "\n";
  }
  if (out.explain) {
    text +=
        "\n  pruned by rule (each counts the value that broke it, before the fields after it):\n";
    for (const auto& [rule, n] : s.enumeration.pruned) {
      text += fmt::format("    {:<60} {:>10}\n", rule, n);
    }
    text += fmt::format("    {:<60} {:>10}\n", "memory (peak + reserve > HBM)", s.pruned_by_memory);
    text += fmt::format("    {:<60} {:>10}\n",
                        out.proven ? "lower bound above the proven top" : "not simulated (budget)",
                        out.fitting - out.simulated);
    text += fmt::format("    {:<60} {:>10}\n", "simulated", out.simulated);
    if (out.failed) text += fmt::format("    {:<60} {:>10}\n", "simulations failed", out.failed);
  }
  return text;
}

}  // namespace trident
