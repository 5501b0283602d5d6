// trident plan: the fastest plans that fit, found by enumerating the plan space
// (src/search/plan_space.h), dropping what does not fit in memory, ordering the rest by a
// step lower bound (src/search/plan_bound.h) and simulating in that order, each candidate in
// a child forked from this process, until no remaining bound can beat the top K.
#include <fmt/format.h>
#include <signal.h>

#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>

#include "cli/child_runner.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/plan_output.h"
#include "cli/progress_line.h"
#include "cli/sweep_manifest.h"
#include "cli/sweep_points.h"
#include "config/references.h"
#include "config/scenario.h"
#include "core/errors.h"
#include "core/fork_pool.h"
#include "engine/simulator.h"
#include "goodput/goodput.h"
#include "lowering/shortcuts.h"
#include "report/metrics.h"
#include "search/plan_search.h"

namespace po = boost::program_options;

namespace trident {
namespace {

// The search's default size limits: a few GiB of candidates, minutes of bounding.
constexpr long long kDefaultMaxCandidates = 2000000;
constexpr double kDefaultMaxWork = 1e8;

// The signal that interrupted the simulations (0: none), set by InterruptGuard's handler.
volatile sig_atomic_t g_interrupt_signal = 0;

void note_interrupt(int sig) { g_interrupt_signal = sig; }

// While alive, SIGINT and SIGTERM (where their action is the default) stop the search's
// launches instead of the process, so that the candidates finished so far are printed.
class InterruptGuard {
 public:
  InterruptGuard() {
    for (int i = 0; i < 2; ++i) {
      struct sigaction act {};
      act.sa_handler = note_interrupt;
      sigemptyset(&act.sa_mask);
      installed_[i] = ::sigaction(kSignals[i], nullptr, &old_[i]) == 0 &&
                      old_[i].sa_handler == SIG_DFL && ::sigaction(kSignals[i], &act, nullptr) == 0;
    }
  }
  ~InterruptGuard() {
    for (int i = 0; i < 2; ++i) {
      if (installed_[i]) ::sigaction(kSignals[i], &old_[i], nullptr);
    }
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
  // In a forked child: the default actions back.
  static void restore_defaults() {
    for (int sig : kSignals) ::signal(sig, SIG_DFL);
  }

 private:
  static constexpr int kSignals[2] = {SIGINT, SIGTERM};
  struct sigaction old_[2]{};
  bool installed_[2] = {false, false};
};

const char* kPlanHelp =
    "usage: trident plan --cluster NAME --model NAME (--nodes N | --gpus N) --seq S\n"
    "                    --global-batch B [--precision P] [options]\n"
    "       trident plan SCENARIO [options]\n"
    "\n"
    "Finds the fastest plans that fit: enumerates tensor, pipeline and data parallel sizes,\n"
    "micro-batch size, schedule (1f1b, interleaved-1f1b) and virtual stages (an uneven layer\n"
    "split when layers do not divide), recompute, sequence parallelism, the distributed\n"
    "optimizer, overlap_grad_reduce and placement (with --wide also tp_comm_overlap,\n"
    "overlap_param_gather and ZeRO-2/3 sharding), keeping only what Megatron-LM accepts\n"
    "(the same checks as `simulate`). A plan that does not fit in HBM (with the reserve) is\n"
    "never simulated; the rest are simulated in order of a step lower bound until the next\n"
    "bound exceeds the K-th best simulated step, so the top K is exact under trident's model\n"
    "(docs/plan.md), unless --max-simulations stops the search first (then it says so, and\n"
    "how fast an unsimulated plan could be). With SCENARIO, its cluster, model, batch and\n"
    "unsearched plan fields are used, its `search:` block pins (KEY: V) or limits (KEY: [V1,\n"
    "V2]) fields as --fix and --vary do, and its own plan is simulated for comparison (row\n"
    "`given`).\n"
    "A space of more than --max-candidates plans, or one whose bounding would build more\n"
    "than --max-work layer workloads, is refused before any is built (exit 2), naming the\n"
    "limit: narrow it with --fix or --vary, or raise the limit. Interrupted\n"
    "(SIGINT, SIGTERM) while simulating, it prints the best of the candidates finished so far\n"
    "(marked not proven) and exits 128 + the signal's number.\n"
    "Exit status 0 when the search ran (even if no plan fits, saying which rule binds); 2 on\n"
    "bad options or input.\n"
    "\n"
    "options";

// The child's work: simulate one candidate and encode what the table needs.
std::string simulate_candidate(const Scenario& sc) {
  const std::vector<StageProgram> programs = build_programs(sc.plan);
  const Workload w = build_workload(sc, programs);
  SimOptions options;
  options.record_intervals = false;
  const Timeline tl = simulate_step(sc, w, programs, options);
  return encode_plan_metrics(make_report(sc, w, tl, "fast"));
}

std::string absolute_unless_name(const std::string& arg) {
  std::error_code ec;
  if (is_library_name(arg) && !std::filesystem::exists(arg, ec)) return arg;
  return std::filesystem::absolute(arg, ec).lexically_normal().string();
}

// Splits "KEY=VALUE" for --fix.
std::pair<std::string, std::string> parse_fix(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw po::error("--fix needs KEY=VALUE, not '" + text + "'");
  }
  return {text.substr(0, eq), text.substr(eq + 1)};
}

// Replaces each fitting candidate's step bound by the expected time to train at that step
// (asynchronous checkpoints, the optimal interval) and sorts them by it, then by index, as
// bound_space orders by step bounds. Returns each one's checkpoint cost and original step
// bound, in the new order.
void rank_by_time_to_train(const Scenario& base, std::vector<BoundedCandidate>* fitting,
                           std::vector<CheckpointCost>* checkpoints,
                           std::vector<double>* step_bounds) {
  std::vector<std::pair<double, size_t>> order;
  std::vector<CheckpointCost> costs;
  for (size_t i = 0; i < fitting->size(); ++i) {
    BoundedCandidate& c = (*fitting)[i];
    const Scenario sc = with_plan(base, c.candidate.plan);
    costs.push_back(checkpoint_cost(sc, build_workload(sc), CheckpointMode::kAsync));
    order.push_back({expected_time_to_train_s(sc, costs.back(), c.bound.total_s), i});
  }
  std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return (*fitting)[a.second].index < (*fitting)[b.second].index;
  });
  std::vector<BoundedCandidate> sorted;
  for (const auto& o : order) {
    sorted.push_back((*fitting)[o.second]);
    step_bounds->push_back(sorted.back().bound.total_s);
    sorted.back().bound.total_s = o.first;
    checkpoints->push_back(costs[o.second]);
  }
  *fitting = std::move(sorted);
}

}  // namespace

int run_plan_command(const std::vector<std::string>& args) {
  po::options_description opts(kPlanHelp);
  std::string cluster, model, precision, format = "table", shard_text, objective = "step";
  TrainingOptions training;
  std::vector<std::string> fixes, varies, sets;
  int nodes = 0, gpus = 0, seq = 0, global_batch = 0, top = 10, jobs = 0;
  long long max_simulations = 0, max_candidates = kDefaultMaxCandidates;
  double max_work = kDefaultMaxWork;
  opts.add_options()("help,h", "show this help")(
      "cluster", po::value(&cluster),
      "the cluster: a library name (trident list clusters) or file")(
      "model", po::value(&model), "the model: a library name (trident list models) or file")(
      "nodes", po::value(&nodes), "nodes of the cluster to use (sets cluster.nodes)")(
      "gpus", po::value(&gpus),
      "GPUs the plans use (default: every GPU of the cluster, or the scenario plan's); fewer "
      "than the cluster's needs --allow-partial")(
      "allow-partial", "let the plans use fewer GPUs than the cluster has")(
      "seq", po::value(&seq), "sequence length (sets model.seq_length)")(
      "global-batch", po::value(&global_batch), "global batch in sequences")(
      "precision", po::value(&precision), "bf16 (default), fp16 or fp8")(
      "fix", po::value(&fixes)->composing(),
      "pin a searched field: --fix plan.schedule=1f1b (repeatable)")(
      "vary", po::value(&varies)->composing(),
      "limit a searched field to values: --vary plan.tensor_parallel=4,8 (repeatable)")(
      "set", po::value(&sets)->composing(),
      "override any other setting before searching (as simulate --set)")(
      "top", po::value(&top), "plans to rank and prove (default 10)")(
      "max-simulations", po::value(&max_simulations),
      "simulate at most N candidates (in bound order); if the top is not proven by then, show "
      "the best of those and the least step any other plan could have (default: no limit)")(
      "max-candidates", po::value(&max_candidates),
      "enumerate at most N candidates (each is held in memory and bounded); a larger space is "
      "refused before any is built (default 2000000; 0: no limit)")(
      "max-work", po::value(&max_work),
      "build at most N layer workloads (candidates x model layers) to bound the candidates; a "
      "space needing more is refused before any is built (default 1e8, some minutes of one "
      "CPU; 0: no limit)")("format", po::value(&format), "table (default), json or csv")(
      "explain", "also show how many candidates each rule pruned and how many were simulated")(
      "wide",
      "also search tp_comm_overlap, overlap_param_gather and the sharding strategies "
      "optim_grads and optim_grads_params (slower: more candidates, dearer simulations)")(
      "jobs,j", po::value(&jobs), "simulations at once (default: the number of CPUs)")(
      "objective", po::value(&objective),
      "step (default): rank by simulated step time; time-to-train: by the expected time to "
      "train --train-tokens with failures, checkpoints and restarts (closed form at the optimal "
      "checkpoint interval, docs/goodput.md)")(
      "train-tokens", po::value(&training.tokens),
      "tokens to train, for --objective time-to-train (15T, 2e12)")(
      "shard", po::value(&shard_text),
      "I/N: search only candidates whose enumeration index is I modulo N; `trident merge` "
      "joins the shards' --format csv outputs into the whole space's top K");
  std::vector<std::string> positional;
  po::variables_map vm;
  if (!parse_command_line(args, opts, 1, "", &positional, &vm)) return 0;
  const auto start = std::chrono::steady_clock::now();
  if (objective != "step" && objective != "time-to-train") {
    throw po::error("--objective must be step or time-to-train, not '" + objective + "'");
  }
  const bool by_time = objective == "time-to-train";
  if (by_time && training.tokens.empty()) {
    throw po::error("--objective time-to-train needs --train-tokens N");
  }
  if (by_time && !shard_text.empty()) {
    throw po::error("--objective time-to-train cannot be combined with --shard");
  }
  ReportFormat report_format;
  if (!parse_report_format(format, &report_format)) {
    throw po::error("--format must be table, json or csv, not '" + format + "'");
  }
  if (top < 1) throw po::error("--top must be at least 1");
  if (vm.count("max-simulations") && max_simulations < 1) {
    throw po::error("--max-simulations must be at least 1");
  }
  if (max_simulations > 0 && !shard_text.empty()) {
    // A shard's unproven prefix would not merge into the whole space's proof.
    throw po::error("--max-simulations cannot be combined with --shard");
  }
  if (vm.count("jobs") && jobs < 1) throw po::error("--jobs must be at least 1");
  if (max_candidates < 0) throw po::error("--max-candidates must be 0 (no limit) or more");
  if (!(max_work >= 0)) throw po::error("--max-work must be 0 (no limit) or more");
  if (jobs < 1) jobs = available_cpus();
  std::string jobs_note;
  jobs = cap_jobs(jobs, &jobs_note);
  const Shard shard = shard_text.empty() ? Shard{} : parse_shard(shard_text);
  const bool from_scenario = !positional.empty();
  if (from_scenario && (vm.count("cluster") || vm.count("model"))) {
    throw po::error("give SCENARIO or --cluster and --model, not both");
  }
  if (!from_scenario && (cluster.empty() || model.empty())) {
    throw po::error("give SCENARIO, or --cluster NAME and --model NAME");
  }
  if (!from_scenario && global_batch < 1) throw po::error("--global-batch B is required");
  if (vm.count("nodes") && nodes < 1) throw po::error("--nodes must be at least 1");
  if (vm.count("gpus") && gpus < 1) throw po::error("--gpus must be at least 1");
  if (vm.count("seq") && seq < 1) throw po::error("--seq must be at least 1");
  std::vector<std::string> overrides = sets;
  if (nodes > 0) overrides.push_back("cluster.nodes=" + std::to_string(nodes));
  if (seq > 0) overrides.push_back("model.seq_length=" + std::to_string(seq));
  if (!precision.empty()) overrides.push_back("plan.precision=" + precision);
  append_training_sets(training, &overrides);

  Scenario base;
  if (from_scenario) {
    if (global_batch > 0) {
      // The scenario's plan must stay valid: its micro-batches follow the new batch.
      overrides.push_back("plan.global_batch_size=" + std::to_string(global_batch));
    }
    base = load_scenario(positional.front(), overrides);
    // Its own plan is simulated too (row `given`).
    check_simulation_activities(base, Fidelity::kFast);
  } else {
    // A one-GPU plan that any batch satisfies, so the files load and are checked as simulate
    // checks them; the search replaces every field it varies.
    const std::string text = "cluster: " + absolute_unless_name(cluster) +
                             "\nmodel: " + absolute_unless_name(model) +
                             "\nplan:\n  tensor_parallel: 1\n  pipeline_parallel: 1\n"
                             "  data_parallel: 1\n  micro_batch_size: 1\n"
                             "  global_batch_size: " +
                             std::to_string(global_batch) + "\n";
    overrides.push_back("plan.num_microbatches=" + std::to_string(global_batch));
    base = load_scenario_text(text, "trident plan", overrides);
  }
  const int cluster_gpus = base.cluster.total_gpus();
  int plan_gpus = gpus > 0 ? gpus : (from_scenario ? base.plan.gpus() : cluster_gpus);
  if (plan_gpus > cluster_gpus) {
    throw po::error(fmt::format("--gpus {} is more than the cluster's {} GPUs (raise --nodes)",
                                plan_gpus, cluster_gpus));
  }
  if (gpus > 0 && plan_gpus < cluster_gpus && !vm.count("allow-partial")) {
    throw po::error(fmt::format(
        "--gpus {} is fewer than the cluster's {} GPUs; add --allow-partial to search a slice",
        plan_gpus, cluster_gpus));
  }

  SpaceLimits limits;
  // Each limit remembers who gave it, so that an error about it blames that option.
  auto add_limit = [&](const std::string& key, std::vector<std::string> values,
                       const std::string& origin) {
    limits.origins[key] = origin;
    for (auto& [k, v] : limits.values) {
      if (k == key) {
        v = std::move(values);  // the command line replaces the scenario's search block
        return;
      }
    }
    limits.values.emplace_back(key, std::move(values));
  };
  for (const SweepAxis& a : base.search) {
    add_limit(a.key, a.values, positional.front() + ": search");
  }
  for (const std::string& f : fixes) {
    auto [key, value] = parse_fix(f);
    add_limit(key, {value}, "--fix");
  }
  for (const std::string& v : varies) {
    const SweepAxis axis = parse_vary(v);
    add_limit(axis.key, axis.values, "--vary");
  }

  SearchContext context;
  context.model = &base.model;
  context.cluster = &base.cluster;
  context.gpus = plan_gpus;
  context.base = base.plan;
  context.wide = vm.count("wide") > 0;
  context.max_candidates = max_candidates;
  context.max_bound_work = max_work;
  SpaceSummary summary = bound_space(base, context, limits, shard.index, shard.count, jobs);
  // --objective time-to-train: rank by the expected time to train, T(step), which grows with
  // the step: bounds become T(bound) and the candidates are proven in that order.
  std::vector<CheckpointCost> checkpoints;
  std::vector<double> step_bounds;
  if (by_time) rank_by_time_to_train(base, &summary.fitting, &checkpoints, &step_bounds);
  const auto objective_of = [&](size_t i, double step) {
    return by_time ? expected_time_to_train_s(with_plan(base, summary.fitting[i].candidate.plan),
                                              checkpoints[i], step)
                   : step;
  };
  const double bound_wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::vector<BoundedCandidate>& fitting = summary.fitting;

  // Simulate in bound order; a position is launched while it may still be needed, and the
  // answer is the proving prefix, whatever order the children finish in.
  const double kUnknown = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> steps(fitting.size(), kUnknown);
  std::vector<PlanResult> results(fitting.size());
  size_t next_pos = 0;
  long long failed = 0;
  std::string first_failure;
  const size_t k = static_cast<size_t>(top);
  ProgressLine progress("plan", fitting.size());
  const InterruptGuard interrupt;
  run_forked(
      jobs,
      [&]() -> long {
        if (g_interrupt_signal != 0) return -1;  // keep what finished; launch nothing more
        if (next_pos >= fitting.size()) return -1;
        if (!worth_simulating(fitting, steps, k, next_pos)) return -1;
        if (max_simulations > 0 && static_cast<long long>(next_pos) >= max_simulations) return -1;
        return static_cast<long>(next_pos++);
      },
      [&](long i) {
        InterruptGuard::restore_defaults();  // a child ends at once on the signal
        return simulate_candidate(with_plan(base, fitting[i].candidate.plan));
      },
      [&](long i, const ForkResult& r) {
        PlanResult& out = results[i];
        if (r.ok && decode_plan_metrics(r.output, &out)) {
          steps[i] = objective_of(i, out.report.step_time_s);
          if (by_time) out.time_to_train_s = steps[i];
        } else if (g_interrupt_signal != 0) {
          // Killed by the interruption, not a failure: unknown, so the prefix stops here.
        } else {
          steps[i] = std::numeric_limits<double>::infinity();
          ++failed;
          if (first_failure.empty()) {
            first_failure = candidate_label(fitting[i].candidate) + ": " + r.output;
          }
        }
        progress.item_done(!r.ok);
      },
      [&] { progress.tick(); });
  progress.finish();
  bool decided = false;
  const size_t prefix = proven_prefix(fitting, steps, k, &decided);
  // Undecided only when the budget stopped the launches: every position before `prefix` ran.
  const int interrupted = g_interrupt_signal;
  const bool budget_hit = !decided && max_simulations > 0 && prefix == next_pos;
  if (!decided && !budget_hit && interrupted == 0) {
    throw SimulationError("plan search ended before its top was proven");
  }

  PlanSearchOutput out;
  if (!decided) {
    out.proven = false;
    out.max_simulations = max_simulations;
    out.interrupted_by = interrupted;
    out.unproven_bound_s = fitting[prefix].bound.total_s;
  }
  std::vector<size_t> order;
  for (size_t i = 0; i < prefix; ++i) {
    if (std::isfinite(steps[i])) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return steps[a] < steps[b]; });
  if (order.size() > k) order.resize(k);
  for (size_t i : order) {
    PlanResult r = results[i];
    r.candidate = fitting[i].candidate;
    r.bound_s = by_time ? step_bounds[i] : fitting[i].bound.total_s;
    r.index = fitting[i].index;
    out.ranked.push_back(r);
  }
  for (size_t i = 0; i < prefix; ++i) {
    if (std::isinf(steps[i])) ++out.failed;
  }
  if (from_scenario && interrupted == 0) {
    // The scenario's own plan, for comparison (it may lie outside the searched space).
    PlanResult given;
    const ForkResult r = [&] {
      ForkResult res;
      run_forked(
          1, [n = 0]() mutable -> long { return n++ == 0 ? 0 : -1; },
          [&](long) { return simulate_candidate(base); },
          [&](long, const ForkResult& f) { res = f; });
      return res;
    }();
    if (r.ok && decode_plan_metrics(r.output, &given)) {
      given.candidate.plan = base.plan;
      const std::vector<StageProgram> programs = build_programs(base.plan);
      const Workload given_work = build_workload(base, programs);
      given.bound_s = step_lower_bound(base, given_work, programs).total_s;
      if (by_time) {
        given.time_to_train_s = expected_time_to_train_s(
            base, checkpoint_cost(base, given_work, CheckpointMode::kAsync),
            given.report.step_time_s);
      }
      out.given = given;
    }
  }
  out.title = fmt::format("{} on {}: {} of {} GPUs, seq {}, global batch {}, {}", base.model.name,
                          base.cluster.name, plan_gpus, cluster_gpus, base.model.seq_length,
                          base.plan.global_batch_size, precision_name(base.plan.precision));
  if (shard.count > 1) {
    out.title += fmt::format(" (shard {}/{})", shard.index, shard.count);
    out.shard_index = shard.index;
    out.shard_count = shard.count;
    out.top = top;
    // What must agree for shards to merge: the files read, every override and limit, the
    // GPUs, the space's size and --top (the shard itself does not enter).
    std::vector<std::string> inputs = overrides;
    inputs.push_back(fmt::format("--gpus={} --top={} --wide={}", plan_gpus, top, context.wide));
    for (const std::string& f : fixes) inputs.push_back("--fix=" + f);
    out.fingerprint =
        current_manifest(summary.enumerated, shard.index, shard.count, inputs, varies, "plan")
            .fingerprint();
  }
  if (shard.count > 1) {
    for (size_t i = 0; i < prefix; ++i) {
      out.proving.push_back({fitting[i].index, fitting[i].bound.total_s, steps[i]});
    }
    if (prefix < fitting.size()) {
      out.after_prefix = PlanShardEntry{fitting[prefix].index, fitting[prefix].bound.total_s,
                                        std::numeric_limits<double>::quiet_NaN()};
    }
  }
  out.fitting = static_cast<long long>(fitting.size());
  out.simulated = static_cast<long long>(prefix);
  out.explain = vm.count("explain") > 0;
  summary.fitting.clear();
  out.summary = std::move(summary);
  std::cout << format_plan_search(out, report_format);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cerr << fmt::format(
      "trident plan: {} candidates (enumerated and bounded in {:.2f} s), {} simulated, in {:.1f} "
      "s ({:.0f} candidates/s)\n",
      out.summary.enumerated, bound_wall, out.simulated, wall,
      wall > 0 ? out.summary.enumerated / wall : 0.0);
  if (!jobs_note.empty()) std::cerr << "trident plan: " << jobs_note << "\n";
  if (!out.proven) std::cerr << "trident plan: " << unproven_note(out) << "\n";
  if (out.ranked.empty() && report_format != ReportFormat::kTable) {
    // The table says why; JSON and CSV readers get it here.
    const std::string why = out.fitting == 0 ? no_fit_reason(out.summary) : "";
    std::cerr << "trident plan: no plan fits" << (why.empty() ? "" : ": " + why) << "\n";
  }
  if (failed > 0) {
    std::cerr << "trident plan: " << failed << " simulation(s) failed; first: " << first_failure
              << "\n";
  }
  return out.interrupted_by != 0 ? 128 + out.interrupted_by : 0;
}

}  // namespace trident
