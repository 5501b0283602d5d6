#include "cli/goodput_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <utility>

#include "cli/sweep_csv.h"

namespace trident {
namespace {

using Json = nlohmann::ordered_json;

struct Row {
  std::string key;    // JSON and CSV name
  std::string label;  // table label
  double value;
  std::string unit;  // table unit: "s", "days", "%", ""
};

std::string xml_escape(const std::string& text) {
  std::string o;
  for (char c : text) {
    if (c == '&')
      o += "&amp;";
    else if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '"')
      o += "&quot;";
    else
      o += c;
  }
  return o;
}

bool tokens_mode(const GoodputResult& g) { return g.options.train_tokens > 0; }

// The scalar results, in print order.
std::vector<Row> scalar_rows(const GoodputResult& g, int gpus, double price) {
  const MonteCarloSummary& mc = g.mc;
  const double mean_time = tokens_mode(g) ? mc.mean.total() : g.expected_time_s;
  std::vector<Row> rows;
  rows.push_back({"step_time_s", "step time", g.step_s, "s"});
  rows.push_back(
      {"straggler_free_step_time_s", "step time without stragglers", g.free_step_s, "s"});
  if (tokens_mode(g)) {
    rows.push_back({"train_tokens", "tokens to train", g.options.train_tokens, ""});
    rows.push_back({"steps", "steps", g.steps, ""});
    rows.push_back({"time_to_train_s", "time to train (mean)", mean_time, "days"});
    rows.push_back({"time_to_train_p10_s", "  p10", quantile(mc.times_s, 0.1), "days"});
    rows.push_back({"time_to_train_p50_s", "  p50", quantile(mc.times_s, 0.5), "days"});
    rows.push_back({"time_to_train_p90_s", "  p90", quantile(mc.times_s, 0.9), "days"});
    rows.push_back(
        {"time_to_train_expected_s", "time to train (closed form)", g.expected_time_s, "days"});
  } else {
    const double per_s = g.tokens_per_step / g.step_s;
    rows.push_back({"train_days", "days of wall-clock", g.options.train_days, ""});
    rows.push_back({"time_to_train_s", "time", mean_time, "days"});
    rows.push_back({"tokens_trained", "tokens trained (mean)", mc.mean.productive_s * per_s, ""});
    rows.push_back({"tokens_trained_p10", "  p10", quantile(mc.work_s, 0.1) * per_s, ""});
    rows.push_back({"tokens_trained_p50", "  p50", quantile(mc.work_s, 0.5) * per_s, ""});
    rows.push_back({"tokens_trained_p90", "  p90", quantile(mc.work_s, 0.9) * per_s, ""});
    rows.push_back(
        {"tokens_trained_expected", "tokens trained (closed form)", g.expected_tokens, ""});
  }
  rows.push_back({"effective_training_fraction", "effective training",
                  mc.mean.productive_s / mc.mean.total(), "%"});
  rows.push_back({"interruptions_expected", "interruptions (mean)", mc.mean.interruptions, ""});
  rows.push_back({"mtbf_s", "job MTBF (all interruptions)", g.rates.mtbf_s(), "s"});
  rows.push_back({"unplanned_mtbf_s", "job MTBF (unplanned)",
                  g.rates.unplanned > 0 ? 1 / g.rates.unplanned : 0, "s"});
  rows.push_back(
      {"checkpoint_bytes_per_gpu", "checkpoint per GPU", g.checkpoint.bytes_per_gpu, "GB"});
  rows.push_back({"checkpoint_bytes_total", "checkpoint", g.checkpoint.bytes_total, "GB"});
  rows.push_back({"checkpoint_save_s", "checkpoint stall", g.checkpoint.save_block_s, "s"});
  rows.push_back({"checkpoint_write_s", "checkpoint write", g.checkpoint.write_s, "s"});
  rows.push_back({"checkpoint_load_s", "checkpoint load", g.checkpoint.load_s, "s"});
  rows.push_back({"restart_s", "restart", g.checkpoint.restart_s, "s"});
  rows.push_back({"checkpoint_interval_s", "checkpoint interval", g.interval_s, "s"});
  rows.push_back({"optimal_interval_s", "  optimum (exact)", g.optimal_s, "s"});
  rows.push_back({"young_interval_s", "  Young", g.young_s, "s"});
  rows.push_back({"daly_interval_s", "  Daly", g.daly_s, "s"});
  if (price > 0) {
    rows.push_back({"cost", "cost (mean)", price * gpus * mean_time / 3600, ""});
  }
  return rows;
}

std::vector<std::pair<std::string, double>> breakdown(const GoodputResult& g) {
  const RunBreakdown& b = g.mc.mean;
  const double free = g.step_s > 0 ? b.productive_s * g.free_step_s / g.step_s : 0;
  return {{"productive_s", free},
          {"straggler_s", b.productive_s - free},
          {"checkpoint_s", b.checkpoint_s},
          {"lost_work_s", b.lost_s},
          {"restart_s", b.restart_s}};
}

std::string table_value(const Row& r) {
  if (r.unit == "days") return fmt::format("{:.2f} days ({:.0f} s)", r.value / 86400, r.value);
  if (r.unit == "%") return fmt::format("{:.2f} %", 100 * r.value);
  if (r.unit == "GB") return fmt::format("{:.3f} GB", r.value / 1e9);
  if (r.unit == "s") return fmt::format("{:.4g} s", r.value);
  return fmt::format("{:.6g}", r.value);
}

}  // namespace

std::string format_goodput(const GoodputResult& g, const std::string& title, int gpus, double price,
                           ReportFormat format) {
  const std::vector<Row> rows = scalar_rows(g, gpus, price);
  const auto parts = breakdown(g);
  if (format == ReportFormat::kJson) {
    Json j;
    j["scenario"] = title;
    j["gpus"] = gpus;
    j["checkpoint_mode"] = checkpoint_mode_name(g.options.mode);
    j["seed"] = g.options.seed;
    j["samples"] = g.options.samples;
    for (const Row& r : rows) j[r.key] = r.value;
    Json b;
    for (const auto& p : parts) b[p.first] = p.second;
    j["goodput_breakdown"] = b;
    Json sources = Json::array();
    for (const FailureSource& s : g.sources) {
      sources.push_back({{"component", s.name},
                         {"count", s.count},
                         {"mtbf_s", s.mtbf_s},
                         {"planned", s.planned},
                         {"interruptions_per_day", s.rate() * 86400}});
    }
    j["failure_sources"] = sources;
    return j.dump(2) + "\n";
  }
  if (format == ReportFormat::kCsv) {
    std::string head = "scenario,gpus,checkpoint_mode,seed,samples", line;
    line = fmt::format("{},{},{},{},{}", csv_field(title), gpus,
                       checkpoint_mode_name(g.options.mode), g.options.seed, g.options.samples);
    for (const Row& r : rows) head += "," + r.key, line += fmt::format(",{}", r.value);
    for (const auto& p : parts) head += "," + p.first, line += fmt::format(",{}", p.second);
    return head + "\n" + line + "\n";
  }
  std::string out =
      fmt::format("{}\n{} checkpoints, {} Monte Carlo samples, seed {}\n\n", title,
                  checkpoint_mode_name(g.options.mode), g.options.samples, g.options.seed);
  for (const Row& r : rows) out += fmt::format("  {:<32} {}\n", r.label, table_value(r));
  const double total = g.mc.mean.total();
  out += "\n  where the time goes (mean)\n";
  for (const auto& p : parts) {
    out += fmt::format("  {:<32} {:.2f} days ({:.2f} %)\n", p.first, p.second / 86400,
                       total > 0 ? 100 * p.second / total : 0);
  }
  out += "\n  interruptions per day, by component\n";
  for (const FailureSource& s : g.sources) {
    out += fmt::format("  {:<32} {:.3f}  ({:g} x MTBF {:.4g} h{})\n", s.name, s.rate() * 86400,
                       s.count, s.mtbf_s / 3600, s.planned ? ", planned" : "");
  }
  return out;
}

std::vector<IntervalPoint> interval_curve(const GoodputResult& g) {
  std::vector<IntervalPoint> points;
  constexpr int kPoints = 25;
  for (int i = 0; i < kPoints; ++i) {
    const double x = std::log(g.optimal_s / 8) + std::log(64.0) * i / (kPoints - 1);
    const double tau = std::min(std::exp(x), g.run.work_s);
    if (!points.empty() && tau <= points.back().interval_s) break;
    const MonteCarloSummary mc = monte_carlo(g.run, tau, 0, g.options.samples, g.options.seed);
    points.push_back({tau, expected_time_s(g.run, tau), mc.mean.total()});
  }
  return points;
}

std::string goodput_svg(const GoodputResult& g, const std::vector<IntervalPoint>& points,
                        const std::string& title) {
  const double w = 720, h = 420, left = 80, right = 20, top = 50, bottom = 60;
  double lo = points.front().expected_s, hi = lo;
  for (const IntervalPoint& p : points) {
    lo = std::min({lo, p.expected_s, p.simulated_s});
    hi = std::max({hi, p.expected_s, p.simulated_s});
  }
  if (hi <= lo) hi = lo * 1.01 + 1;
  const double x0 = std::log(points.front().interval_s), x1 = std::log(points.back().interval_s);
  const auto sx = [&](double tau) {
    return left + (w - left - right) * (x1 > x0 ? (std::log(tau) - x0) / (x1 - x0) : 0.5);
  };
  const auto sy = [&](double t) { return top + (h - top - bottom) * (hi - t) / (hi - lo); };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"24\" font-size=\"14\">{}</text>\n",
      w, h, left, xml_escape(title));
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"black\"/>\n", left,
                     h - bottom, w - right);
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"black\"/>\n", left,
                     top, h - bottom);
  for (int i = 0; i <= 4; ++i) {
    const double t = lo + (hi - lo) * i / 4;
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:.4g}</text>\n", left - 6,
                       sy(t) + 4, t / 86400);
  }
  for (size_t i = 0; i < points.size(); i += 6) {
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:.3g}</text>\n",
                       sx(points[i].interval_s), h - bottom + 18, points[i].interval_s / 60);
  }
  svg += fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">checkpoint interval (minutes of "
      "training, log scale)</text>\n",
      (left + w - right) / 2, h - 18);
  svg += fmt::format(
      "<text x=\"18\" y=\"{}\" transform=\"rotate(-90 18 {})\" text-anchor=\"middle\">time to "
      "train (days)</text>\n",
      (top + h - bottom) / 2, (top + h - bottom) / 2);
  std::string line, dots;
  for (const IntervalPoint& p : points) {
    line +=
        fmt::format("{}{:.1f},{:.1f}", line.empty() ? "" : " ", sx(p.interval_s), sy(p.expected_s));
    dots += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"#d62728\"/>\n",
                        sx(p.interval_s), sy(p.simulated_s));
  }
  svg += "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"" + line +
         "\"/>\n" + dots;
  const auto mark = [&](double tau, const char* color, const std::string& label, double dy) {
    if (tau < points.front().interval_s || tau > points.back().interval_s) return;
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"{3}\" "
        "stroke-dasharray=\"4 3\"/>\n<text x=\"{4:.1f}\" y=\"{5}\" fill=\"{3}\">{6}</text>\n",
        sx(tau), top, h - bottom, color, sx(tau) + 4, top + dy, xml_escape(label));
  };
  mark(g.optimal_s, "#2ca02c", fmt::format("optimum {:.1f} min", g.optimal_s / 60), 12);
  if (g.interval_s != g.optimal_s) {
    mark(g.interval_s, "#9467bd", fmt::format("used {:.1f} min", g.interval_s / 60), 28);
  }
  svg += fmt::format(
      "<text x=\"{}\" y=\"42\" text-anchor=\"end\"><tspan fill=\"#1f77b4\">line: closed "
      "form</tspan>  <tspan fill=\"#d62728\">dots: Monte Carlo mean</tspan></text>\n",
      w - right);
  return svg + "</svg>\n";
}

}  // namespace trident
