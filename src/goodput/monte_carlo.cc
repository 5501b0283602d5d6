#include "goodput/monte_carlo.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "goodput/prng.h"

namespace trident {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

double next_event(double now, double rate, Prng* prng) {
  return rate > 0 ? now + prng->exponential(1 / rate) : kNever;
}

}  // namespace

RunBreakdown replay_run(const RunModel& run, double interval_s, double horizon_s, Prng* prng) {
  RunBreakdown b;
  const double end_of_time = horizon_s > 0 ? horizon_s : kNever;
  double t = 0;
  double progress = 0;      // work done since the start, durable or not
  double durable = 0;       // work in the last durable checkpoint
  double pending = -1;      // work in the checkpoint being written, -1: none
  double pending_done = 0;  // when that write ends
  double next_fail = next_event(t, run.unplanned_rate, prng);
  double next_stop = next_event(t, run.planned_rate, prng);
  const auto settle = [&](double now) {
    if (pending >= 0 && pending_done <= now) durable = pending, pending = -1;
  };
  while (progress < run.work_s && t < end_of_time) {
    const double seg = std::min(interval_s, run.work_s - progress);
    const double stall = pending >= 0 ? std::max(0.0, pending_done - (t + seg)) : 0;
    const double end = t + seg + stall + run.save_block_s;
    const double event = std::min(next_fail, next_stop);
    if (end_of_time <= std::min(event, end)) {  // the horizon falls in this segment
      const double worked = std::min(seg, end_of_time - t);
      progress += worked, b.productive_s += worked;
      b.checkpoint_s += end_of_time - t - worked;
      t = end_of_time;
      break;
    }
    if (event >= end) {  // the segment and its checkpoint complete
      progress += seg, b.productive_s += seg;
      b.checkpoint_s += stall + run.save_block_s;
      t = end;
      settle(t);
      if (run.write_lag_s > 0) {
        pending = progress, pending_done = t + run.write_lag_s;
      } else {
        durable = progress;
      }
      continue;
    }
    b.interruptions += 1;
    if (next_fail <= next_stop) {  // unplanned: back to the last durable checkpoint
      settle(next_fail);
      const double redo = progress - durable;
      b.productive_s -= redo;
      b.lost_s += redo + (next_fail - t);
      progress = durable, pending = -1;
      t = next_fail;
      // Restart; a failure during it starts it over.
      for (;;) {
        next_fail = next_event(t, run.unplanned_rate, prng);
        if (next_fail >= t + run.restart_s) break;
        b.restart_s += next_fail - t, b.interruptions += 1;
        t = next_fail;
      }
      b.restart_s += run.restart_s;
      t += run.restart_s;
    } else {  // planned: save what is done, stop, start again
      const double worked = std::min(seg, next_stop - t);
      progress += worked, b.productive_s += worked;
      b.checkpoint_s += next_stop - t - worked;
      durable = progress, pending = -1;
      t = next_stop + run.planned_stop_s;
      b.restart_s += run.planned_stop_s;
      // Failures are memoryless: draw the next of each from the restart's end.
      next_fail = next_event(t, run.unplanned_rate, prng);
    }
    // The planned stop just taken, or one due during the restart (skipped), is redrawn.
    if (next_stop <= t) next_stop = next_event(t, run.planned_rate, prng);
  }
  return b;
}

MonteCarloSummary monte_carlo(const RunModel& run, double interval_s, double horizon_s, int samples,
                              std::uint64_t seed) {
  Prng prng(seed);
  MonteCarloSummary s;
  for (int i = 0; i < samples; ++i) {
    const RunBreakdown b = replay_run(run, interval_s, horizon_s, &prng);
    s.mean.productive_s += b.productive_s / samples;
    s.mean.checkpoint_s += b.checkpoint_s / samples;
    s.mean.lost_s += b.lost_s / samples;
    s.mean.restart_s += b.restart_s / samples;
    s.mean.interruptions += b.interruptions / samples;
    s.times_s.push_back(b.total());
    s.work_s.push_back(b.productive_s);
  }
  std::sort(s.times_s.begin(), s.times_s.end());
  std::sort(s.work_s.begin(), s.work_s.end());
  return s;
}

double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const std::size_t i = static_cast<std::size_t>(pos);
  if (i + 1 >= sorted.size()) return sorted.back();
  return sorted[i] + (pos - static_cast<double>(i)) * (sorted[i + 1] - sorted[i]);
}

}  // namespace trident
