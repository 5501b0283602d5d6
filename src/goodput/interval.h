// The expected wall-clock time of a run with checkpoints and failures, in closed form, and the
// checkpoint interval that minimises it (Young 1974; Daly 2006, "A higher order estimate of the
// optimum checkpoint interval for restart dumps", FGCS 22(3)).
#ifndef TRIDENT_GOODPUT_INTERVAL_H_
#define TRIDENT_GOODPUT_INTERVAL_H_

namespace trident {

// A run to model: `work_s` seconds of training steps, checkpointed every `interval` seconds of
// them. All times in seconds, rates per second.
struct RunModel {
  double work_s = 0;          // productive time: steps x step time
  double save_block_s = 0;    // training stalls this long per checkpoint
  double write_lag_s = 0;     // then the checkpoint becomes durable this much later (async)
  double restart_s = 0;       // after an unplanned interruption, until training runs again
  double planned_stop_s = 0;  // a planned stop: save, then restart; no work lost
  double unplanned_rate = 0;  // unplanned interruptions per second (Poisson)
  double planned_rate = 0;    // planned interruptions per second (Poisson)
};

// Returns Young's interval sqrt(2 delta M) (delta: the checkpoint's stall, M: mean time between
// unplanned interruptions).
double young_interval(double delta_s, double mtbf_s);
// Returns Daly's higher-order optimum: sqrt(2 delta M) [1 + (delta / 2M)^(1/2) / 3 +
// (delta / 2M) / 9] - delta when delta < 2M, else M.
double daly_interval(double delta_s, double mtbf_s);

// Returns the expected wall-clock time of `run` checkpointed every `interval_s` (> 0) seconds
// of work. Unplanned interruptions (exponential, mean M = 1 / unplanned_rate) during work,
// checkpoints and restarts: Daly's exact expectation M e^(R/M) (e^((tau + delta)/M) - 1) W / tau
// (W / tau (tau + delta) without failures). Asynchronous saves: a checkpoint is durable
// write_lag_s after its stall, so a failure loses that much more on average (R += lag), and a
// save waits for the previous write to end (delta += max(0, lag - tau)). Planned stops at
// rate p, each planned_stop_s, stretch the result to T / (1 - p planned_stop_s) (infinite when
// that is not positive).
double expected_time_s(const RunModel& run, double interval_s);

// Returns the interval in (0, work_s] that minimises expected_time_s (golden-section search on
// log tau, to a relative 1e-9): the exact optimum Young and Daly approximate. work_s when there
// are no unplanned failures (one checkpoint at the end).
double optimal_interval_s(const RunModel& run);

// Returns the best interval that is a whole number (>= 1) of steps of `step_s` (> 0):
// checkpoints are taken between steps. expected_time_s is unimodal in the interval, so that is
// the multiple just below or just above optimal_interval_s, whichever is better.
double optimal_whole_steps_s(const RunModel& run, double step_s);

}  // namespace trident

#endif  // TRIDENT_GOODPUT_INTERVAL_H_
