// The whole-run model of `trident goodput` (docs/goodput.md): a step time from the engine, the
// job's failure rates from its components, the checkpoint's costs, and from them the expected
// time to train (closed form) and its distribution (Monte Carlo over seeded failure draws).
#ifndef TRIDENT_GOODPUT_GOODPUT_H_
#define TRIDENT_GOODPUT_GOODPUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "config/scenario.h"
#include "goodput/checkpoint.h"
#include "goodput/interval.h"
#include "goodput/job_components.h"
#include "goodput/monte_carlo.h"
#include "workload/stage_work.h"

namespace trident {

// Returns `scenario` with its stragglers cleared, so that the straggler slowdown of a run is
// (step as configured) - (step of this scenario): `scenario` with cluster.stragglers cleared
// (docs/stragglers.md), so a scenario without stragglers reads 0.
Scenario straggler_free(const Scenario& scenario);

struct GoodputOptions {
  double train_tokens = 0;  // > 0: time to train this many tokens
  double train_days = 0;    // > 0: instead, tokens trained in this many days of wall-clock
  int samples = 200;
  std::uint64_t seed = 1;
  double interval_s = 0;  // checkpoint interval in seconds of work; 0: the optimum
  CheckpointMode mode = CheckpointMode::kAsync;
};

// Returns the run of `work_s` seconds of steps of `scenario` with `checkpoint`'s costs and the
// failure rates of the job's components (job_failure_sources over plan.gpus()).
RunModel run_model(const Scenario& scenario, const CheckpointCost& checkpoint, double work_s);

struct GoodputResult {
  GoodputOptions options;
  double step_s = 0, free_step_s = 0;
  double tokens_per_step = 0;
  double steps = 0;  // to train train_tokens (tokens mode)
  std::vector<FailureSource> sources;
  JobRates rates;
  CheckpointCost checkpoint;
  RunModel run;
  // Young's and Daly's intervals; the optimum in whole steps (optimal_whole_steps_s); the
  // interval used (the optimum, or options.interval_s rounded to whole steps).
  double young_s = 0, daly_s = 0, optimal_s = 0, interval_s = 0;
  double expected_time_s = 0;  // closed form (tokens mode), or the horizon (days mode)
  double expected_tokens = 0;  // closed form: tokens trained by the end
  MonteCarloSummary mc;
};

// Evaluates the model (exactly one of options.train_tokens, options.train_days > 0; requires
// a validated scenario, workload = build_workload(scenario), step_s its simulated step and
// free_step_s that of straggler_free(scenario)). Tokens mode: work = ceil(train_tokens /
// tokens per step) x step_s. Days mode: the runs stop at the horizon.
GoodputResult evaluate_goodput(const Scenario& scenario, const Workload& workload, double step_s,
                               double free_step_s, const GoodputOptions& options);

// Returns the expected time (s) to train plan.train_tokens tokens (requires > 0) at `step_s`
// per step with `checkpoint`'s costs, closed form at the optimal interval in whole steps: the
// ranking of `trident plan --objective time-to-train`. Increasing in step_s, so a step lower
// bound gives a time-to-train lower bound.
double expected_time_to_train_s(const Scenario& scenario, const CheckpointCost& checkpoint,
                                double step_s);

}  // namespace trident

#endif  // TRIDENT_GOODPUT_GOODPUT_H_
