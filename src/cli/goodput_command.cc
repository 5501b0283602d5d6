// trident goodput SCENARIO: how long training really takes, with failures, checkpoints and
// restarts (docs/goodput.md). The step comes from the engine (two forked simulations: the
// scenario as configured and without its stragglers); the whole run from src/goodput.
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <cstdlib>
#include <iostream>
#include <limits>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/goodput_output.h"
#include "config/map_reader.h"
#include "config/scenario.h"
#include "core/errors.h"
#include "core/fork_pool.h"
#include "core/output_file.h"
#include "core/units.h"
#include "engine/simulator.h"
#include "goodput/goodput.h"
#include "layout/program.h"
#include "lowering/shortcuts.h"
#include "report/metrics.h"
#include "report/writers.h"
#include "workload/stage_work.h"

namespace po = boost::program_options;

namespace trident {
namespace {

const char kUsage[] =
    "usage: trident goodput SCENARIO (--train-tokens N | --train-days D) [options]\n\n"
    "How long training really takes: the scenario's step (simulated as `trident simulate`\n"
    "does) repeated for the whole run, with the job's interruptions (failure rates per\n"
    "component from cluster.reliability, counted over the GPUs, nodes, NICs, switches and\n"
    "cables the job uses), checkpoints (the model and optimizer state per GPU, written at\n"
    "cluster.storage's bandwidth; async: training stalls only for the copy to the host),\n"
    "restarts (detection, scheduling, process start, NCCL set-up, checkpoint load) and the\n"
    "work lost since the last durable checkpoint. Prints the expected time to train in closed\n"
    "form (Daly 2006) and its distribution over --samples Monte Carlo runs drawn from --seed\n"
    "(p10/p50/p90), the effective-training fraction, where the time goes, and the checkpoint\n"
    "interval that minimises the expected time (with Young's and Daly's approximations).\n"
    "--train-days D prints instead the tokens trained in D days of wall-clock.\n"
    "Same input and seed: byte-identical output. Exit status 2 on bad options or input.\n"
    "\noptions";

// Seconds from "600", "600 s" or "10 min".
double parse_interval(const std::string& text) {
  double v = 0;
  if (!parse_plain_number(text, &v)) {
    std::string error;
    const auto q = parse_quantity(text, Dimension::kTime, &error);
    if (!q) throw po::error("--checkpoint-interval: " + error);
    v = *q;
  }
  if (!(v > 0) || !std::isfinite(v)) {
    throw po::error("--checkpoint-interval must be a positive time, not '" + text + "'");
  }
  return v;
}

// The child's work: simulate one step of `sc` and return its time, exactly (hex float).
std::string simulate_step_time(const Scenario& sc) {
  const std::vector<StageProgram> programs = build_programs(sc.plan);
  const Workload w = build_workload(sc, programs);
  SimOptions options;
  options.record_intervals = false;
  const Timeline tl = simulate_step(sc, w, programs, options);
  return fmt::format("{:a}", make_report(sc, w, tl, "fast").step_time_s);
}

// Returns the simulated step of each scenario, each in a forked child (SimGrid runs one
// simulation per process), two at a time.
std::vector<double> simulate_steps(const std::vector<Scenario>& scenarios) {
  std::vector<double> steps(scenarios.size(), 0);
  long next = 0;
  std::string failure;
  run_forked(
      2, [&]() -> long { return next < long(scenarios.size()) ? next++ : -1; },
      [&](long i) { return simulate_step_time(scenarios[i]); },
      [&](long i, const ForkResult& r) {
        if (r.ok)
          steps[i] = std::strtod(r.output.c_str(), nullptr);
        else if (failure.empty())
          failure = r.output;
      });
  if (!failure.empty()) throw SimulationError("the step simulation failed: " + failure);
  return steps;
}

}  // namespace

int run_goodput_command(const std::vector<std::string>& args) {
  po::options_description opts(kUsage);
  std::string format = "table", output, svg, interval, mode = "async";
  std::vector<std::string> sets;
  double days = 0;
  long long samples = 200;
  unsigned long long seed = 1;
  opts.add_options()("help,h", "show this help")(
      "train-days", po::value(&days),
      "instead of --train-tokens: the tokens trained in D days of wall-clock")(
      "seed", po::value(&seed), "seed of the failure draws (default 1)")(
      "samples", po::value(&samples), "Monte Carlo runs, 1 to 100000 (default 200)")(
      "checkpoint-interval", po::value(&interval),
      "seconds of training between checkpoints (`900`, `15 min`); default: the optimum")(
      "checkpoint-save", po::value(&mode),
      "async (default: training stalls for the copy to host memory, the write overlaps; "
      "Megatron-LM --async-save) or sync (training waits for the write)")(
      "set", po::value(&sets)->composing(),
      "override a field after files are loaded, as simulate: --set cluster.nodes=2048, --set "
      "\"cluster.reliability.gpu_mtbf=50000 h\" (repeatable)")("format", po::value(&format),
                                                               "table (default), json or csv")(
      "output,o", po::value(&output), "write the report to FILE instead of stdout")(
      "svg", po::value(&svg),
      "also plot the time to train against the checkpoint interval (closed form and Monte "
      "Carlo means, the optimum marked) to FILE.svg; needs --train-tokens");
  TrainingOptions training;
  add_training_options(&opts, &training);
  std::vector<std::string> positional;
  po::variables_map vm;
  if (!parse_command_line(args, opts, 1, "missing SCENARIO file", &positional, &vm)) return 0;
  const bool by_days = vm.count("train-days") > 0;
  if (by_days == !training.tokens.empty()) {
    throw po::error("give exactly one of --train-tokens N and --train-days D");
  }
  if (by_days && !(days > 0 && days <= 1e5)) {
    throw po::error("--train-days must be in (0, 100000]");
  }
  if (samples < 1 || samples > 100000) throw po::error("--samples must be from 1 to 100000");
  ReportFormat report_format;
  if (!parse_report_format(format, &report_format)) {
    throw po::error("--format must be table, json or csv, not '" + format + "'");
  }
  GoodputOptions options;
  if (!parse_checkpoint_mode(mode, &options.mode)) {
    throw po::error("--checkpoint-save must be async or sync, not '" + mode + "'");
  }
  if (!interval.empty()) options.interval_s = parse_interval(interval);
  if (by_days && !svg.empty()) throw po::error("--svg needs --train-tokens");
  for (const std::string* path : {&output, &svg}) {
    if (path->empty()) continue;
    const std::string problem = output_path_problem(*path);
    if (!problem.empty())
      throw po::error("--" + std::string(path == &svg ? "svg" : "output") + ": " + problem);
  }
  append_training_sets(training, &sets);
  const Scenario scenario = load_scenario(positional.front(), sets);
  if (!svg.empty()) check_not_an_input("svg", svg);
  if (!output.empty()) check_not_an_input("output", output);
  check_simulation_activities(scenario, Fidelity::kFast);
  options.samples = static_cast<int>(samples);
  options.seed = seed;
  options.train_tokens = by_days ? 0 : scenario.plan.train_tokens;
  options.train_days = by_days ? days : 0;
  const std::vector<double> steps = simulate_steps({scenario, straggler_free(scenario)});
  const Workload workload = build_workload(scenario);
  const GoodputResult g = evaluate_goodput(scenario, workload, steps[0], steps[1], options);
  const std::string title =
      fmt::format("{} on {}: {} GPUs", scenario.name.empty() ? scenario.model.name : scenario.name,
                  scenario.cluster.name, scenario.plan.gpus());
  const std::string text =
      format_goodput(g, title, scenario.plan.gpus(), scenario.plan.gpu_hour_price, report_format);
  if (output.empty()) {
    std::cout << text;
  } else {
    write_file_atomically(output, text);
  }
  if (!svg.empty()) write_file_atomically(svg, goodput_svg(g, interval_curve(g), title));
  return 0;
}

}  // namespace trident
