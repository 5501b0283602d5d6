#include "report/comparison.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/utf8.h"
#include "report/metric_table.h"
#include "report/plan_label.h"

namespace trident {
namespace {

using Json = nlohmann::ordered_json;

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

const ComparedVariant* first_ok(const std::vector<ComparedVariant>& variants) {
  for (const ComparedVariant& v : variants) {
    if (v.error.empty()) return &v;
  }
  return nullptr;
}

// Step time relative to the first variant's; 0 when either did not run.
double step_ratio(const std::vector<ComparedVariant>& variants, const ComparedVariant& v) {
  if (variants.empty() || !variants[0].error.empty() || !v.error.empty()) return 0;
  const double base = variants[0].report.step_time_s;
  return base > 0 ? v.report.step_time_s / base : 0;
}

// Whether a variant that ran has `pred`.
bool any_ran(const std::vector<ComparedVariant>& variants,
             const std::function<bool(const Report&)>& pred) {
  return std::any_of(variants.begin(), variants.end(),
                     [&](const ComparedVariant& v) { return v.error.empty() && pred(v.report); });
}

// A model with experts: tokens are routed (a dense model reports 0 per expert).
bool has_experts(const Report& r) { return r.expert_parallel > 1 || r.tokens_per_expert_max > 0; }

std::string format_table(const std::vector<ComparedVariant>& variants,
                         const std::string& scenario_path) {
  std::string o;
  const ComparedVariant* any = first_ok(variants);
  // The clusters and models of the variants that ran, each once, in order.
  const auto distinct = [&](std::string Report::*field) {
    std::vector<std::string> names;
    for (const ComparedVariant& v : variants) {
      const std::string& name = v.report.*field;
      if (v.error.empty() && std::find(names.begin(), names.end(), name) == names.end()) {
        names.push_back(name);
      }
    }
    return names;
  };
  const std::vector<std::string> clusters = distinct(&Report::cluster);
  const std::vector<std::string> models = distinct(&Report::model);
  if (any != nullptr) {
    o += fmt::format("trident compare: {} on {} ({})\n", join(models, " / "), join(clusters, " / "),
                     scenario_path);
  } else {
    o += fmt::format("trident compare: {}\n", scenario_path);
  }
  size_t name_width = 0;
  for (const ComparedVariant& v : variants) name_width = std::max(name_width, v.name.size());
  for (const ComparedVariant& v : variants) {
    o += fmt::format("  {:<{}}  {}\n", v.name, name_width,
                     v.overrides.empty() ? "(the scenario as it is)" : join(v.overrides, ", "));
  }
  o += "\n";
  std::vector<size_t> width;
  for (const ComparedVariant& v : variants) {
    size_t w = std::max<size_t>(12, v.name.size() + 2);
    if (clusters.size() > 1) w = std::max(w, v.report.cluster.size() + 2);
    if (models.size() > 1) w = std::max(w, v.report.model.size() + 2);
    if (v.error.empty()) w = std::max(w, plan_label(v.report).size() + 2);
    width.push_back(w);
  }
  auto row = [&](const std::string& label, const std::function<std::string(const Report&)>& cell,
                 bool ratio = false) {
    o += fmt::format("  {:<22}", label);
    for (size_t i = 0; i < variants.size(); ++i) {
      const ComparedVariant& v = variants[i];
      std::string text = "error";
      if (v.error.empty()) {
        const double r = step_ratio(variants, v);
        text = ratio ? (r > 0 ? fmt::format("{:.2f}x", r) : "-") : cell(v.report);
      }
      o += fmt::format("{:>{}}", text, width[i]);
    }
    o += "\n";
  };
  auto pct = [](double x) { return fmt::format("{:.1f} %", 100 * x); };
  o += fmt::format("  {:<22}", "");
  for (size_t i = 0; i < variants.size(); ++i) {
    o += fmt::format("{:>{}}", variants[i].name, width[i]);
  }
  o += "\n";
  if (clusters.size() > 1) row("cluster", [](const Report& r) { return r.cluster; });
  if (models.size() > 1) row("model", [](const Report& r) { return r.model; });
  row("plan", [](const Report& r) { return plan_label(r); });
  row("step time", [](const Report& r) { return fmt::format("{:.4f} s", r.step_time_s); });
  row("  vs first", nullptr, true);
  row("tokens/s", [](const Report& r) { return fmt::format("{:.0f}", r.tokens_per_s); });
  row("MFU", [&](const Report& r) { return pct(r.mfu); });
  row("compute utilization", [&](const Report& r) { return pct(r.compute_utilization); });
  row("bubble", [&](const Report& r) { return pct(r.bubble_fraction); });
  // CP and EP rows only when a variant has context parallelism or experts, as in simulate's
  // table.
  const bool cp = any_ran(variants, [](const Report& r) { return r.context > 1; });
  const bool ep = any_ran(variants, [](const Report& r) { return has_experts(r); });
  for (const CommMetric& c : comm_metrics()) {
    if ((c.kind == std::string("cp") && !cp) || (c.kind == std::string("ep") && !ep)) continue;
    row(c.label, [&](const Report& r) { return fmt::format("{:.4f} s", r.*c.seconds); });
    row("  share of step",
        [&](const Report& r) { return pct(comm_share(r.*c.seconds, r.step_time_s)); });
  }
  row("peak memory", [](const Report& r) { return fmt::format("{:.1f} GiB", r.peak_memory_gib); });
  row("fits in memory",
      [](const Report& r) { return std::string(r.fits_in_memory ? "yes" : "NO"); });
  const bool any_training = std::any_of(variants.begin(), variants.end(), [](const auto& v) {
    return v.error.empty() && v.report.train_days.has_value();
  });
  if (any_training) {
    const auto optional = [](const std::optional<double>& v, const char* format) {
      return v ? fmt::format(fmt::runtime(format), *v) : std::string("-");
    };
    row("time to train", [&](const Report& r) { return optional(r.train_days, "{:.1f} days"); });
    row("GPU-hours", [&](const Report& r) { return optional(r.gpu_hours, "{:.0f}"); });
    row("cost", [&](const Report& r) { return optional(r.cost, "{:.0f}"); });
  }
  bool first_error = true;
  for (const ComparedVariant& v : variants) {
    if (v.error.empty()) continue;
    o += fmt::format("{}  {}: error: {}\n", first_error ? "\n" : "", v.name, v.error);
    first_error = false;
  }
  return o;
}

std::string format_json(const std::vector<ComparedVariant>& variants,
                        const std::string& scenario_path) {
  Json j;
  j["scenario"] = scenario_path;
  Json list = Json::array();
  for (const ComparedVariant& v : variants) {
    Json e;
    e["name"] = v.name;
    e["overrides"] = v.overrides;
    e["status"] = v.error.empty() ? "ok" : "error";
    if (!v.error.empty()) {
      e["error"] = v.error;
    } else {
      // Every key of the variant's own report, as `simulate --format json` wrote it.
      for (const Metric& m : report_metrics()) e[m.key] = metric_json(m, v.report);
      for (const CommMetric& c : comm_metrics()) {
        e[std::string(c.kind) + "_comm_share"] =
            comm_share(v.report.*c.seconds, v.report.step_time_s);
      }
      e["step_time_ratio"] = step_ratio(variants, v);
    }
    list.push_back(std::move(e));
  }
  j["variants"] = std::move(list);
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string format_csv(const std::vector<ComparedVariant>& variants) {
  std::string header = csv_header();
  header.pop_back();
  std::string shares;
  for (const CommMetric& c : comm_metrics()) shares += "," + std::string(c.kind) + "_comm_share";
  std::string o = "variant,overrides," + header + shares + ",step_time_ratio,status\n";
  const size_t columns = std::count(header.begin(), header.end(), ',') + 1 + comm_metrics().size();
  for (const ComparedVariant& v : variants) {
    o += report_csv_field(v.name) + "," + report_csv_field(join(v.overrides, ";")) + ",";
    if (v.error.empty()) {
      std::string row = csv_row(v.report);
      row.pop_back();
      const Report& r = v.report;
      o += row;
      for (const CommMetric& c : comm_metrics()) {
        o += fmt::format(",{:.10g}", comm_share(r.*c.seconds, r.step_time_s));
      }
      o += fmt::format(",{:.10g},ok\n", step_ratio(variants, v));
    } else {
      o += std::string(columns + 1, ',') + report_csv_field("error: " + v.error) + "\n";
    }
  }
  return o;
}

}  // namespace

double comm_share(double exposed_s, double step_time_s) {
  return step_time_s > 0 ? exposed_s / step_time_s : 0;
}

Report parse_report_json(const std::string& text) {
  try {
    const Json j = Json::parse(text);
    Report r;
    for (const Metric& m : report_metrics()) {
      // An unset optional may be null or absent; every other key must be there.
      const bool optional = std::holds_alternative<std::optional<double> Report::*>(m.field);
      if (optional && !j.contains(m.key)) continue;
      read_metric(m, j.at(m.key), &r);
    }
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("not a simulate report: ") + e.what());
  }
}

std::string format_comparison(const std::vector<ComparedVariant>& variants,
                              const std::string& scenario_path, ReportFormat format) {
  switch (format) {
    case ReportFormat::kJson:
      return format_json(variants, scenario_path);
    case ReportFormat::kCsv:
      return format_csv(variants);
    case ReportFormat::kTable:
      break;
  }
  return format_table(variants, scenario_path);
}

}  // namespace trident
