// Monte Carlo of a whole training run: interruptions drawn from a seeded, portable generator
// (goodput/prng.h), each run replayed event by event: work, checkpoint stalls, lost work since
// the last durable checkpoint, restarts (which can fail too), planned stops.
#ifndef TRIDENT_GOODPUT_MONTE_CARLO_H_
#define TRIDENT_GOODPUT_MONTE_CARLO_H_

#include <cstdint>
#include <vector>

#include "goodput/interval.h"

namespace trident {

class Prng;

// Where one run's wall-clock time went (s); the four sum to its time.
struct RunBreakdown {
  double productive_s = 0;   // steps that count
  double checkpoint_s = 0;   // checkpoint stalls of saves that completed
  double lost_s = 0;         // work (and stalls) redone after a failure
  double restart_s = 0;      // restarts, and planned stops
  double interruptions = 0;  // unplanned and planned
  double total() const { return productive_s + checkpoint_s + lost_s + restart_s; }
};

// Replays one run of `run` checkpointed every `interval_s` seconds of work (> 0): until
// run.work_s of work is done, or, with horizon_s > 0, until horizon_s of wall-clock time has
// passed (then productive_s is the work done by then, what is left counted as it stands).
// Work runs in segments of interval_s, each followed by a checkpoint (waiting first for the
// previous asynchronous write, then stalling save_block_s); it becomes durable write_lag_s
// later. An unplanned interruption rolls the work back to the last durable checkpoint and
// costs restart_s, during which another may strike; a planned one keeps the work done and
// costs planned_stop_s. Inter-arrival times are exponential draws from `prng`.
RunBreakdown replay_run(const RunModel& run, double interval_s, double horizon_s, Prng* prng);

struct MonteCarloSummary {
  RunBreakdown mean;            // averages over the samples
  std::vector<double> times_s;  // each sample's wall-clock time, ascending
  std::vector<double> work_s;   // each sample's productive time, ascending
};

// Replays `samples` (>= 1) runs from generator seed `seed` (sample i continues the stream of
// sample i - 1, so the result depends on seed and samples only).
MonteCarloSummary monte_carlo(const RunModel& run, double interval_s, double horizon_s, int samples,
                              std::uint64_t seed);

// Returns the q-quantile (0 <= q <= 1) of ascending `sorted` (non-empty) by linear
// interpolation between closest ranks.
double quantile(const std::vector<double>& sorted, double q);

}  // namespace trident

#endif  // TRIDENT_GOODPUT_MONTE_CARLO_H_
