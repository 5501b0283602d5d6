// trident sweep: one simulation per point of a cartesian product of settings, each in its own
// child process (this binary's `simulate --format csv`), rows streamed to CSV in point order.
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>

#include "cli/child_runner.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/progress_line.h"
#include "cli/sweep_csv.h"
#include "cli/sweep_manifest.h"
#include "cli/sweep_output.h"
#include "cli/sweep_points.h"
#include "config/scenario.h"
#include "core/errors.h"
#include "core/output_file.h"
#include "lowering/shortcuts.h"
#include "report/writers.h"

namespace po = boost::program_options;

namespace trident {
namespace {

const char* kSweepHelp =
    "usage: trident sweep SCENARIO [--vary KEY=V1,V2,...]... [options]\n"
    "\n"
    "Simulates every point of a sweep and writes one CSV row per point. The points are the\n"
    "cartesian product of the scenario's `sweep:` axes and of each --vary (a --vary of a key\n"
    "the scenario sweeps replaces its values), first axis slowest. Any cluster., model. or\n"
    "plan. key can vary; each point runs as `trident simulate SCENARIO --set KEY=V ...` in its\n"
    "own process. `...` continues a doubling run: --vary plan.num_microbatches=1,2,4,...,128.\n"
    "\n"
    "Columns: point (index in the whole sweep), the varied keys, the report's scalar keys\n"
    "(bubble_fraction beside ideal_bubble_fraction, the closed form (p-1)/(m+p-1)), then\n"
    "status: ok, \"does not fit\" (ran, but a GPU's memory exceeds its HBM) or \"error: WHY\"\n"
    "(no report; the sweep goes on). Rows are in point order, whatever finishes first.\n"
    "A point that fails for an outside reason -- killed by a signal (SIGKILL from the OOM\n"
    "killer, SIGTERM) or by --point-timeout -- gets the status \"error: interrupted: WHY\", and\n"
    "--resume runs it again; a point that fails on its input keeps its row.\n"
    "A sweep has at most 100000 points (counted before any runs).\n"
    "Exit status 0 when every point has its row; 1 when every point this run simulated\n"
    "failed on its input (each row says why: nothing to compare; interrupted points, which\n"
    "--resume reruns, do not count); 2 on bad options or scenario.\n"
    "\n"
    "options";

// The report columns of a child's `simulate --format csv` output, or "" when it is not one.
std::string report_row_of(const std::string& out, const std::string& header) {
  if (out.size() < header.size() || out.compare(0, header.size(), header) != 0) return "";
  std::string row = out.substr(header.size());
  if (row.empty() || row.back() != '\n' || row.find('\n') != row.size() - 1) return "";
  row.pop_back();
  return row;
}

}  // namespace

int run_sweep_command(const std::vector<std::string>& args) {
  po::options_description opts(kSweepHelp);
  std::vector<std::string> varies, sets;
  std::string out_path, shard_text, fidelity;
  int jobs = 0;
  double point_timeout = 0;
  opts.add_options()("help,h", "show this help")(
      "vary", po::value(&varies)->composing(),
      "an axis: KEY=V1,V2,... (repeatable); commas inside [..] stay in the value: "
      "--vary \"plan.placement=[tensor, data, pipeline],[data, tensor, pipeline]\"")(
      "set", po::value(&sets)->composing(), "a fixed override for every point (as simulate)")(
      "jobs,j", po::value(&jobs),
      "points simulated at once (default: the number of CPUs; capped at 4 per CPU and by the "
      "open-file limit, 2 descriptors per job)")(
      "point-timeout", po::value(&point_timeout),
      "seconds one point may run before it is killed (default 0: no limit); its row says "
      "\"error: interrupted: timed out after N s\"")(
      "out,o", po::value(&out_path),
      "write the CSV to FILE (default stdout); rows are appended and synced one by one. "
      "FILE is locked while the sweep runs (a second sweep on it refuses) and FILE.manifest "
      "beside it records the point count, the shard and a fingerprint of the inputs "
      "(refused, as FILE is, when it is an input, a symbolic link or a file that is not a "
      "sweep manifest)")(
      "resume",
      "keep the rows already in --out and run only the missing points (and the interrupted "
      "ones); a sweep killed at any moment and resumed gives the same file as one "
      "uninterrupted run. Refused when the scenario, a file it reads, --set, --vary or "
      "--fidelity changed since FILE was started")(
      "shard", po::value(&shard_text),
      "I/N: run only points whose index is I modulo N (0 <= I < N); join the shards' files "
      "with `trident merge` (scripts/slurm_sweep.sh does both on Slurm)")(
      "fidelity", po::value(&fidelity), "passed to simulate: fast (default) or full");
  TrainingOptions training;
  add_training_options(&opts, &training);
  std::vector<std::string> positional;
  po::variables_map vm;
  if (!parse_command_line(args, opts, 1, "missing SCENARIO file", &positional, &vm)) return 0;
  append_training_sets(training, &sets);
  const std::string& scenario_path = positional.front();
  if (vm.count("jobs") && jobs < 1) throw po::error("--jobs must be at least 1");
  if (!(point_timeout >= 0)) throw po::error("--point-timeout must be 0 (no limit) or more");
  if (jobs < 1) jobs = available_cpus();
  std::string jobs_note;
  jobs = cap_jobs(jobs, &jobs_note);
  if (!jobs_note.empty()) std::cerr << "trident sweep: " << jobs_note << "\n";
  const bool resume = vm.count("resume") > 0;
  if (resume && out_path.empty()) throw po::error("--resume needs --out FILE");
  check_fidelity_option(fidelity);
  const Shard shard = shard_text.empty() ? Shard{} : parse_shard(shard_text);

  // The scenario is loaded here only to check it and read its `sweep:` block; each point is
  // loaded again, with its overrides, and checked at --fidelity by its child (`simulate`).
  const Scenario scenario = load_scenario(scenario_path, sets);
  check_simulation_activities(scenario, Fidelity::kFast);
  std::vector<SweepAxis> vary_axes;
  for (const std::string& v : varies) vary_axes.push_back(parse_vary(v));
  const std::vector<SweepAxis> axes = combine_axes(scenario.sweep, vary_axes);
  if (axes.empty()) {
    throw po::error("nothing to sweep: give --vary KEY=V1,V2,... or a `sweep:` block in " +
                    scenario_path);
  }
  const std::vector<SweepPoint> planned = select_shard(expand_points(axes), shard);
  const SweepManifest manifest =
      current_manifest(count_points(axes), shard.index, shard.count, sets, varies, fidelity);

  const std::string report_header = csv_header();
  std::vector<std::string> header_fields;
  split_csv_line(report_header.substr(0, report_header.size() - 1), &header_fields);
  const int report_columns = static_cast<int>(header_fields.size());
  size_t fits_column = header_fields.size();
  for (size_t i = 0; i < header_fields.size(); ++i) {
    if (header_fields[i] == "fits_in_memory") fits_column = i;
  }

  // The output must not be an input: the scenario, its files, or a file an axis names.
  std::vector<std::string> axis_values;
  for (const SweepAxis& a : axes)
    axis_values.insert(axis_values.end(), a.values.begin(), a.values.end());
  check_not_an_input("out", out_path, axis_values);
  if (!out_path.empty()) {
    std::string problem = output_path_problem(out_path);
    std::error_code ec;
    const std::string target = output_target(out_path);
    const bool file =
        !std::filesystem::exists(target, ec) || std::filesystem::is_regular_file(target, ec);
    if (problem.empty() && file) {
      // FILE.manifest is written too: checked as --out is, and never over a file the user
      // did not name (an input, an unrelated file, or wherever a link there points).
      check_not_an_input("out", manifest_path(out_path), axis_values);
      problem = manifest_path_problem(out_path);
    }
    if (!problem.empty()) throw po::error("--out: " + problem);
  }
  SweepOutput output(out_path, sweep_header(axes, report_header), planned, resume, manifest);
  std::vector<size_t> to_run;  // positions in `planned`
  for (size_t i = 0; i < planned.size(); ++i) {
    if (!output.has_row(i)) to_run.push_back(i);
  }
  const std::string exe = self_executable();
  std::vector<std::vector<std::string>> commands;
  for (size_t position : to_run) {
    std::vector<std::string> argv = {exe, "simulate", scenario_path};
    std::vector<std::string> overrides = sets;
    for (const std::string& o : point_overrides(axes, planned[position])) overrides.push_back(o);
    for (const std::string& o : overrides) {
      argv.push_back("--set");
      argv.push_back(o);
    }
    argv.insert(argv.end(), {"--format", "csv"});
    if (!fidelity.empty()) argv.insert(argv.end(), {"--fidelity", fidelity});
    commands.push_back(std::move(argv));
  }

  size_t failed = 0, not_fitting = 0, interrupted = 0;
  ProgressLine progress("sweep", commands.size());
  run_children(
      commands, jobs,
      [&](size_t i, const ChildResult& result) {
        const SweepPoint& point = planned[to_run[i]];
        std::string report_row, status;
        if (!result.ok()) {
          if (result.interrupted()) ++interrupted;
          status =
              std::string(result.interrupted() ? kInterruptedStatus : "error: ") + result.failure();
        } else if ((report_row = report_row_of(result.out, report_header)).empty()) {
          status = "error: unexpected output from simulate";
        } else {
          std::vector<std::string> fields;
          split_csv_line(report_row, &fields);
          const bool fits = fits_column >= fields.size() || fields[fits_column] != "false";
          status = fits ? "ok" : "does not fit";
          if (!fits) ++not_fitting;
        }
        const bool point_failed = report_row.empty();
        if (point_failed) ++failed;
        progress.clear();  // rows may go to the same terminal
        output.add(to_run[i], sweep_row(point, report_row, report_columns, status));
        progress.item_done(point_failed);
      },
      [&] { progress.tick(); }, 250, point_timeout);
  output.finish();
  progress.finish();
  if (failed > 0 || not_fitting > 0) {
    std::cerr << "trident sweep: " << failed << " of " << commands.size() << " points failed and "
              << not_fitting << (not_fitting == 1 ? " does" : " do")
              << " not fit in memory (see the status column)\n";
  }
  // Rows that all say "error" are no result, whatever was written.
  if (!commands.empty() && failed == commands.size() && interrupted == 0) {
    std::cerr << "trident sweep: every point failed\n";
    return 1;
  }
  return 0;
}

}  // namespace trident
