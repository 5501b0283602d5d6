#include "goodput/goodput.h"

#include <algorithm>
#include <cmath>

namespace trident {

Scenario straggler_free(const Scenario& scenario) {
  Scenario free = scenario;
  free.cluster = without_stragglers(scenario.cluster);
  return free;
}

RunModel run_model(const Scenario& scenario, const CheckpointCost& checkpoint, double work_s) {
  const JobRates rates = job_rates(job_failure_sources(scenario.cluster, scenario.plan.gpus()));
  RunModel run;
  run.work_s = work_s;
  run.save_block_s = checkpoint.save_block_s;
  run.write_lag_s = checkpoint.write_lag_s;
  run.restart_s = checkpoint.restart_s;
  run.planned_stop_s = checkpoint.planned_stop_s;
  run.unplanned_rate = rates.unplanned;
  run.planned_rate = rates.planned;
  return run;
}

GoodputResult evaluate_goodput(const Scenario& scenario, const Workload& workload, double step_s,
                               double free_step_s, const GoodputOptions& options) {
  GoodputResult g;
  g.options = options;
  g.step_s = step_s;
  g.free_step_s = free_step_s;
  g.tokens_per_step = double(scenario.plan.global_batch_size) * scenario.model.seq_length;
  g.sources = job_failure_sources(scenario.cluster, scenario.plan.gpus());
  g.rates = job_rates(g.sources);
  g.checkpoint = checkpoint_cost(scenario, workload, options.mode);
  const double horizon = options.train_days * 86400;
  if (options.train_tokens > 0) {
    g.steps = std::ceil(options.train_tokens / g.tokens_per_step);
  }
  // Days mode: the work a run could do at most is the horizon's.
  const double work = options.train_tokens > 0 ? g.steps * step_s : horizon;
  g.run = run_model(scenario, g.checkpoint, work);
  const double mtbf = g.rates.unplanned > 0 ? 1 / g.rates.unplanned : 0;
  g.young_s = mtbf > 0 ? young_interval(g.checkpoint.save_block_s, mtbf) : 0;
  g.daly_s = mtbf > 0 ? daly_interval(g.checkpoint.save_block_s, mtbf) : 0;
  g.optimal_s = optimal_whole_steps_s(g.run, step_s);
  // A given interval is taken at the step it falls in (checkpoints come between steps).
  g.interval_s = options.interval_s > 0
                     ? std::max(1.0, std::round(options.interval_s / step_s)) * step_s
                     : g.optimal_s;
  const double per_work = expected_time_s(g.run, g.interval_s) / g.run.work_s;
  if (options.train_tokens > 0) {
    g.expected_time_s = per_work * g.run.work_s;
    g.expected_tokens = g.steps * g.tokens_per_step;
    g.mc = monte_carlo(g.run, g.interval_s, 0, options.samples, options.seed);
  } else {
    g.expected_time_s = horizon;
    g.expected_tokens = horizon / per_work / step_s * g.tokens_per_step;
    RunModel open = g.run;
    open.work_s = 1e300;  // the horizon ends the run
    g.mc = monte_carlo(open, g.interval_s, horizon, options.samples, options.seed);
  }
  return g;
}

double expected_time_to_train_s(const Scenario& scenario, const CheckpointCost& checkpoint,
                                double step_s) {
  const double tokens_per_step =
      double(scenario.plan.global_batch_size) * scenario.model.seq_length;
  const double work = std::ceil(scenario.plan.train_tokens / tokens_per_step) * step_s;
  const RunModel run = run_model(scenario, checkpoint, work);
  return expected_time_s(run, optimal_whole_steps_s(run, step_s));
}

}  // namespace trident
