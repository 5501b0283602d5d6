#include "report/comparison.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "core/utf8.h"

namespace trident {
namespace {

using Json = nlohmann::ordered_json;

// Splits a CSV line of plain fields (the report's scalars: numbers and booleans).
std::vector<std::string> split_plain(std::string line) {
  if (!line.empty() && line.back() == '\n') line.pop_back();
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = line.find(',', start);
    out.push_back(line.substr(start, comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

std::string csv_quoted(const std::string& raw) {
  const std::string s = sanitize_utf8(raw);
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c == '\n' ? ' ' : c;
  }
  return q + "\"";
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
  row("plan",
      [](const Report& r) { return fmt::format("t{} p{} d{}", r.tensor, r.pipeline, r.data); });
  row("step time", [](const Report& r) { return fmt::format("{:.4f} s", r.step_time_s); });
  row("  vs first", nullptr, true);
  row("tokens/s", [](const Report& r) { return fmt::format("{:.0f}", r.tokens_per_s); });
  row("MFU", [&](const Report& r) { return pct(r.mfu); });
  row("compute utilization", [&](const Report& r) { return pct(r.compute_utilization); });
  row("bubble", [&](const Report& r) { return pct(r.bubble_fraction); });
  const struct {
    const char* label;
    double Report::*field;
  } comms[] = {{"exposed TP comm", &Report::tp_comm_exposed_s},
               {"exposed PP comm", &Report::pp_comm_exposed_s},
               {"exposed DP comm", &Report::dp_comm_exposed_s}};
  for (const auto& c : comms) {
    row(c.label, [&](const Report& r) { return fmt::format("{:.4f} s", r.*c.field); });
    row("  share of step",
        [&](const Report& r) { return pct(comm_share(r.*c.field, r.step_time_s)); });
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
  const std::vector<std::string> keys = split_plain(csv_header());
  for (const ComparedVariant& v : variants) {
    Json e;
    e["name"] = v.name;
    e["overrides"] = v.overrides;
    e["status"] = v.error.empty() ? "ok" : "error";
    if (!v.error.empty()) {
      e["error"] = v.error;
    } else {
      const std::vector<std::string> values = split_plain(csv_row(v.report));
      for (size_t i = 0; i < keys.size() && i < values.size(); ++i) {
        e[keys[i]] = values[i].empty() ? Json(nullptr) : Json::parse(values[i]);
      }
      e["tp_comm_share"] = comm_share(v.report.tp_comm_exposed_s, v.report.step_time_s);
      e["pp_comm_share"] = comm_share(v.report.pp_comm_exposed_s, v.report.step_time_s);
      e["dp_comm_share"] = comm_share(v.report.dp_comm_exposed_s, v.report.step_time_s);
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
  std::string o = "variant,overrides," + header +
                  ",tp_comm_share,pp_comm_share,dp_comm_share,step_time_ratio,status\n";
  const size_t columns = split_plain(header).size();
  for (const ComparedVariant& v : variants) {
    o += csv_quoted(v.name) + "," + csv_quoted(join(v.overrides, ";")) + ",";
    if (v.error.empty()) {
      std::string row = csv_row(v.report);
      row.pop_back();
      const Report& r = v.report;
      o += row + fmt::format(",{:.10g},{:.10g},{:.10g},{:.10g},ok\n",
                             comm_share(r.tp_comm_exposed_s, r.step_time_s),
                             comm_share(r.pp_comm_exposed_s, r.step_time_s),
                             comm_share(r.dp_comm_exposed_s, r.step_time_s),
                             step_ratio(variants, v));
    } else {
      o += std::string(columns + 3, ',') + csv_quoted("error: " + v.error) + "\n";
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
    r.scenario = j.at("scenario").get<std::string>();
    r.cluster = j.at("cluster").get<std::string>();
    r.model = j.at("model").get<std::string>();
    r.schedule = j.at("schedule").get<std::string>();
    r.fidelity = j.at("fidelity").get<std::string>();
    r.tensor = j.at("tensor_parallel").get<int>();
    r.pipeline = j.at("pipeline_parallel").get<int>();
    r.data = j.at("data_parallel").get<int>();
    r.gpus = j.at("gpus").get<int>();
    r.micro_batch_size = j.at("micro_batch_size").get<int>();
    r.global_batch_size = j.at("global_batch_size").get<int>();
    r.num_microbatches = j.at("num_microbatches").get<int>();
    r.step_time_s = j.at("step_time_s").get<double>();
    r.bubble_fraction = j.at("bubble_fraction").get<double>();
    r.ideal_bubble_fraction = j.at("ideal_bubble_fraction").get<double>();
    r.compute_utilization = j.at("compute_utilization").get<double>();
    r.mfu = j.at("mfu").get<double>();
    r.hfu = j.at("hfu").get<double>();
    r.model_tflops_per_gpu = j.at("model_tflops_per_gpu").get<double>();
    r.tokens_per_s = j.at("tokens_per_s").get<double>();
    r.tp_comm_exposed_s = j.at("tp_comm_exposed_s").get<double>();
    r.pp_comm_exposed_s = j.at("pp_comm_exposed_s").get<double>();
    r.dp_comm_exposed_s = j.at("dp_comm_exposed_s").get<double>();
    r.peak_memory_gib = j.at("peak_memory_gib").get<double>();
    r.fits_in_memory = j.at("fits_in_memory").get<bool>();
    r.model_flops_per_step = j.at("model_flops_per_step").get<double>();
    r.hardware_flops_per_step = j.at("hardware_flops_per_step").get<double>();
    r.parameters = j.at("parameters").get<double>();
    r.sim_activities = j.at("sim_activities").get<unsigned long long>();
    for (const auto& [key, field] :
         {std::pair{"train_tokens", &Report::train_tokens},
          std::pair{"train_days", &Report::train_days}, std::pair{"gpu_hours", &Report::gpu_hours},
          std::pair{"cost", &Report::cost}}) {
      if (j.contains(key) && !j.at(key).is_null()) r.*field = j.at(key).get<double>();
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
