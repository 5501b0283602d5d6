#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <iterator>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "config/checks.h"
#include "config/megatron_args.h"
#include "config/megatron_load.h"
#include "config/references.h"
#include "config/scenario.h"
#include "core/errors.h"
#include "core/input_files.h"
#include "core/output_file.h"
#include "engine/simulator.h"
#include "layout/program.h"
#include "lowering/shortcuts.h"
#include "report/metrics.h"
#include "report/svg_timeline.h"
#include "report/trace_writer.h"
#include "report/writers.h"
#include "workload/stage_work.h"

namespace po = boost::program_options;

namespace trident {
namespace {

bool vm_has_megatron(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--megatron-args" || a.rfind("--megatron-args=", 0) == 0) return true;
  }
  return false;
}

std::string megatron_label(const std::string& path) { return path == "-" ? "<stdin>" : path; }

// Reads the launch line (a file, or stdin for "-") and translates it; a cluster file path is
// made absolute, since the scenario's paths are read relative to the launch line's file.
MegatronScenario translate_megatron_input(const std::string& path, std::string cluster) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), {});
  } else {
    text = read_input_file(path);
  }
  std::error_code ec;
  if (!is_library_name(cluster) || std::filesystem::exists(cluster, ec)) {
    cluster = std::filesystem::absolute(cluster, ec).lexically_normal().string();
  }
  return translate_megatron_args(text, megatron_label(path), cluster);
}

}  // namespace

int run_simulate_command(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: trident simulate SCENARIO [options]\n\n"
      "Simulates one training step (one global batch) of the scenario's model on its cluster\n"
      "with its tensor x pipeline x data plan, and prints step time, bubble, utilization, MFU,\n"
      "exposed communication and memory per GPU.\n\noptions");
  std::string format = "table", fidelity = "fast", trace_path, timeline_path;
  std::string megatron_path, cluster;
  std::vector<std::string> sets;
  double trace_limit_mib = 512;
  opts.add_options()("help,h", "show this help")(
      "set", po::value(&sets)->composing(),
      "override a field after files are loaded: --set plan.tensor_parallel=4, "
      "--set \"cluster.nvlink.bandwidth=900 GB/s\" (repeatable)")(
      "format", po::value(&format), "report format: table (default), json or csv")(
      "fidelity", po::value(&fidelity),
      "fast (default): one actor per tensor-parallel group, closed-form collectives where "
      "exact; full: every GPU and every ring step simulated (validation, slower)")(
      "trace", po::value(&trace_path),
      "also write the step as Chrome trace-event JSON to FILE.json (open in ui.perfetto.dev); "
      "written whole or not at all: interrupted (SIGINT, SIGTERM, a file-size limit) it leaves "
      "neither FILE nor a temporary")(
      "trace-limit", po::value(&trace_limit_mib),
      "largest --trace in MiB (default 512; 0: no limit). A trace estimated past it is refused "
      "before simulating (exit 2); one that grows past it while written fails (exit 1) and "
      "leaves no file")(
      "timeline", po::value(&timeline_path),
      "also draw the pipeline schedule as an SVG Gantt chart, one row per stage, to FILE.svg "
      "(not the --trace file, under any name or link)")(
      "megatron-args", po::value(&megatron_path),
      "instead of SCENARIO: a file holding a Megatron-LM launch line (pretrain_gpt.py and its "
      "arguments; - for stdin), translated into a scenario on --cluster; $VARIABLES expand "
      "from the file's assignments and the environment (docs/megatron-args.md)")(
      "cluster", po::value(&cluster), "with --megatron-args: the cluster, a library name or file")(
      "print-scenario", "with --megatron-args: print the equivalent scenario YAML and stop")(
      "verbose", "with --megatron-args: list the arguments ignored (they do not change the step)");
  TrainingOptions training;
  add_training_options(&opts, &training);
  std::vector<std::string> positional;
  po::variables_map vm;
  if (!parse_command_line(args, opts, 1, vm_has_megatron(args) ? "" : "missing SCENARIO file",
                          &positional, &vm)) {
    return 0;
  }
  append_training_sets(training, &sets);
  const bool megatron = vm.count("megatron-args") > 0;
  if (megatron && !positional.empty()) {
    throw po::error("give either SCENARIO or --megatron-args FILE, not both");
  }
  if (!megatron && (vm.count("cluster") || vm.count("print-scenario"))) {
    throw po::error("--cluster and --print-scenario go with --megatron-args FILE");
  }
  if (megatron && cluster.empty()) {
    throw po::error("--megatron-args needs --cluster NAME|FILE (see trident list clusters)");
  }
  const std::string scenario_path = megatron ? megatron_path : positional.front();
  ReportFormat report_format;
  if (!parse_report_format(format, &report_format)) {
    throw po::error("--format must be table, json or csv, not '" + format + "'");
  }
  Fidelity fid;
  if (!parse_fidelity(fidelity, &fid)) {
    throw po::error("--fidelity must be fast or full, not '" + fidelity + "'");
  }

  // Output files are checked now, so that a bad path fails before a long simulation.
  const std::pair<const char*, const std::string*> outputs[] = {{"trace", &trace_path},
                                                                {"timeline", &timeline_path}};
  for (const auto& [option, path] : outputs) {
    if (!vm.count(option)) continue;
    const std::string problem = output_path_problem(*path);
    if (!problem.empty()) throw po::error("--" + std::string(option) + ": " + problem);
  }

  Scenario scenario;
  if (megatron) {
    const MegatronScenario translated = translate_megatron_input(megatron_path, cluster);
    if (vm.count("verbose")) {
      for (const std::string& a : translated.ignored) std::cerr << "ignored: " << a << "\n";
    }
    scenario = load_megatron_scenario(translated, megatron_label(megatron_path), sets);
    if (vm.count("print-scenario")) {
      std::cout << translated.yaml;
      return 0;
    }
  } else {
    scenario = load_scenario(scenario_path, sets);
  }
  for (const auto& [option, path] : outputs) check_not_an_input(option, *path);
  if (!trace_path.empty() && !timeline_path.empty() &&
      same_output_file(trace_path, timeline_path)) {
    throw po::error("--trace '" + trace_path + "' and --timeline '" + timeline_path +
                    "' name the same file (through a link); give two files");
  }
  // The activity limit counts what this fidelity simulates (its shortcuts).
  check_simulation_activities(scenario, fid);
  // Built once: the workload's memory, the engine and the trace all read these programs.
  const std::vector<StageProgram> programs = build_programs(scenario.plan);
  const Workload workload = build_workload(scenario, programs);
  if (!(trace_limit_mib >= 0)) throw po::error("--trace-limit must be 0 (no limit) or more");
  const double trace_limit = trace_limit_mib * (1 << 20);
  if (!trace_path.empty() && trace_limit > 0) {
    const double estimate = static_cast<double>(
        estimate_trace_bytes(scenario, programs, decide_shortcuts(scenario, fid)));
    if (estimate > trace_limit) {
      SourceLocation where;
      where.file = "--trace";
      throw ConfigError(where, fmt::format("the trace would be at least {:.0f} MiB, more than "
                                           "--trace-limit {:g} MiB; raise the limit or trace "
                                           "fewer micro-batches",
                                           estimate / (1 << 20), trace_limit_mib));
    }
  }
  SimOptions sim;
  sim.fidelity = fid;
  sim.record_intervals = !trace_path.empty() || !timeline_path.empty();
  const Timeline timeline = simulate_step(scenario, workload, programs, sim);
  const Report report = make_report(scenario, workload, timeline, fidelity_name(fid));
  std::cout << format_report(report, report_format);
  // Written only now that the step simulated, each whole or not at all.
  if (!trace_path.empty()) {
    AtomicOutputFile out(trace_path);
    double written = 0;
    write_trace(scenario, workload, timeline, [&](const std::string& piece) {
      written += static_cast<double>(piece.size());
      if (trace_limit > 0 && written > trace_limit) {
        throw std::runtime_error(
            fmt::format("cannot write '{}': the trace grew past --trace-limit "
                        "{:g} MiB (nothing written)",
                        trace_path, trace_limit_mib));
      }
      out.write(piece);
    });
    out.commit();
  }
  if (!timeline_path.empty()) {
    write_file_atomically(timeline_path, format_svg_timeline(scenario, timeline));
  }
  return 0;
}

}  // namespace trident
