#include "goodput/interval.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace trident {

double young_interval(double delta_s, double mtbf_s) { return std::sqrt(2 * delta_s * mtbf_s); }

double daly_interval(double delta_s, double mtbf_s) {
  if (delta_s >= 2 * mtbf_s) return mtbf_s;
  const double x = delta_s / (2 * mtbf_s);
  return std::sqrt(2 * delta_s * mtbf_s) * (1 + std::sqrt(x) / 3 + x / 9) - delta_s;
}

double expected_time_s(const RunModel& run, double interval_s) {
  const double tau = interval_s;
  const double delta = run.save_block_s + std::max(0.0, run.write_lag_s - tau);
  double t;
  if (run.unplanned_rate > 0) {
    const double m = 1 / run.unplanned_rate;
    const double r = run.restart_s + run.write_lag_s;
    // expm1 keeps the tiny exponents of rare failures exact.
    t = m * std::exp(r / m) * std::expm1((tau + delta) / m) * run.work_s / tau;
  } else {
    t = run.work_s / tau * (tau + delta);
  }
  const double planned = 1 - run.planned_rate * run.planned_stop_s;
  return planned > 0 ? t / planned : std::numeric_limits<double>::infinity();
}

double optimal_interval_s(const RunModel& run) {
  if (!(run.unplanned_rate > 0) || run.work_s <= 0) return run.work_s;
  // Unimodal in log tau: golden-section search between a millionth of the work and all of it.
  double lo = std::log(run.work_s * 1e-6), hi = std::log(run.work_s);
  const double g = (std::sqrt(5.0) - 1) / 2;
  const auto f = [&](double x) { return expected_time_s(run, std::exp(x)); };
  double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
  double fa = f(a), fb = f(b);
  while (hi - lo > 1e-9) {
    if (fa < fb) {
      hi = b, b = a, fb = fa, a = hi - g * (hi - lo), fa = f(a);
    } else {
      lo = a, a = b, fa = fb, b = lo + g * (hi - lo), fb = f(b);
    }
  }
  return std::exp((lo + hi) / 2);
}

double optimal_whole_steps_s(const RunModel& run, double step_s) {
  const double k = std::floor(optimal_interval_s(run) / step_s);
  const double below = std::max(1.0, k) * step_s, above = std::max(1.0, k + 1) * step_s;
  return expected_time_s(run, above) < expected_time_s(run, below) ? above : below;
}

}  // namespace trident
