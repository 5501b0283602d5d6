// trident compare: simulates variants of one scenario, each in its own child process (this
// binary's `simulate --format json`), and prints them side by side.
#include <boost/program_options.hpp>
#include <iostream>

#include "cli/child_runner.h"
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/compare_variants.h"
#include "config/scenario.h"
#include "core/errors.h"
#include "lowering/shortcuts.h"
#include "report/comparison.h"
#include "report/writers.h"

namespace po = boost::program_options;

namespace trident {
namespace {

const char* kCompareHelp =
    "usage: trident compare SCENARIO (--variant NAME:KEY=V[,KEY=V...])... [options]\n"
    "       trident compare SCENARIO --tp-placement intra,inter [options]\n"
    "\n"
    "Simulates each variant of the scenario (its overrides applied after the scenario's files\n"
    "and any --set) in its own process and prints them side by side: step time and its ratio\n"
    "to the first variant, tokens/s, MFU, compute utilization, bubble, exposed TP/PP/DP\n"
    "communication (seconds and share of the step; CP and EP too when a variant has them),\n"
    "peak memory. --format json gives every key of each variant's report (docs/report.md).\n"
    "\n"
    "--tp-placement intra,inter compares the scenario's plan with its tensor-parallel groups\n"
    "inside one NVLink island (intra: placement [tensor, data, pipeline]) against the same\n"
    "plan with each TP rank on a different island, i.e. a different node on DGX-like machines\n"
    "(inter). Ranks are laid out in placement order, fastest-varying first, so TP ranks sit\n"
    "`stride` ranks apart; inter picks the first order whose TP stride reaches the island size:\n"
    "[data, tensor, pipeline] when data >= island size, else [pipeline, tensor, data] when\n"
    "pipeline >= island size, else [data, pipeline, tensor] (the widest spread possible; some\n"
    "TP ranks then share an island). The command prints the placements it used.\n"
    "\n"
    "Exit status 0 when every variant ran, 1 when one failed to simulate (the others are\n"
    "still shown), 2 on bad options or a variant that is not a valid scenario.\n"
    "\n"
    "options";

}  // namespace

int run_compare_command(const std::vector<std::string>& args) {
  po::options_description opts(kCompareHelp);
  std::vector<std::string> variant_texts, sets;
  std::string tp_placement, format = "table", fidelity;
  int jobs = 0;
  double point_timeout = 0;
  opts.add_options()("help,h", "show this help")(
      "variant", po::value(&variant_texts)->composing(),
      "NAME:KEY=V[,KEY=V...] (repeatable; the first is the baseline): "
      "--variant t8:plan.tensor_parallel=8 --variant \"t4:plan.tensor_parallel=4,"
      "plan.pipeline_parallel=16\"; NAME: alone is the scenario as it is")(
      "tp-placement", po::value(&tp_placement),
      "intra,inter: TP groups inside NVLink islands versus across nodes (see above)")(
      "set", po::value(&sets)->composing(), "an override for every variant (as simulate)")(
      "format", po::value(&format), "table (default), json or csv")(
      "fidelity", po::value(&fidelity), "passed to simulate: fast (default) or full")(
      "jobs,j", po::value(&jobs),
      "variants simulated at once (default: the number of CPUs; capped at 4 per CPU and by "
      "the open-file limit)")(
      "point-timeout", po::value(&point_timeout),
      "seconds one variant may run before it is killed and reported as failed (default 0: "
      "no limit)");
  TrainingOptions training;
  add_training_options(&opts, &training);
  std::vector<std::string> positional;
  po::variables_map vm;
  if (!parse_command_line(args, opts, 1, "missing SCENARIO file", &positional, &vm)) return 0;
  append_training_sets(training, &sets);
  const std::string& scenario_path = positional.front();
  ReportFormat report_format;
  if (!parse_report_format(format, &report_format)) {
    throw po::error("--format must be table, json or csv, not '" + format + "'");
  }
  check_fidelity_option(fidelity);
  Fidelity fid = Fidelity::kFast;
  if (!fidelity.empty()) parse_fidelity(fidelity, &fid);
  if (vm.count("jobs") && jobs < 1) throw po::error("--jobs must be at least 1");
  if (!(point_timeout >= 0)) throw po::error("--point-timeout must be 0 (no limit) or more");
  if (jobs < 1) jobs = available_cpus();
  std::string jobs_note;
  jobs = cap_jobs(jobs, &jobs_note);
  if (!jobs_note.empty()) std::cerr << "trident compare: " << jobs_note << "\n";
  if (variant_texts.empty() == tp_placement.empty()) {
    throw po::error(
        "give either --variant NAME:KEY=V,... (one or more) or --tp-placement "
        "intra,inter");
  }

  const Scenario scenario = load_scenario(scenario_path, sets);
  std::vector<Variant> variants;
  if (!tp_placement.empty()) {
    variants = tp_placement_variants(tp_placement, scenario.plan, scenario.cluster);
  } else {
    for (const std::string& text : variant_texts) {
      variants.push_back(parse_variant(text));
      for (size_t i = 0; i + 1 < variants.size(); ++i) {
        if (variants[i].name == variants.back().name) {
          throw po::error("two variants are named '" + variants.back().name + "'");
        }
      }
    }
  }
  // Every variant must be a valid scenario that --fidelity can simulate: bad input stops here
  // with exit 2.
  for (const Variant& v : variants) {
    std::vector<std::string> overrides = sets;
    overrides.insert(overrides.end(), v.overrides.begin(), v.overrides.end());
    try {
      check_simulation_activities(load_scenario(scenario_path, overrides), fid);
    } catch (const ConfigError& e) {
      SourceLocation where;
      where.file = "variant " + v.name;
      throw ConfigError(where, e.what());
    }
  }

  const std::string exe = self_executable();
  std::vector<std::vector<std::string>> commands;
  for (const Variant& v : variants) {
    std::vector<std::string> argv = {exe, "simulate", scenario_path};
    std::vector<std::string> overrides = sets;
    overrides.insert(overrides.end(), v.overrides.begin(), v.overrides.end());
    for (const std::string& o : overrides) argv.insert(argv.end(), {"--set", o});
    argv.insert(argv.end(), {"--format", "json"});
    if (!fidelity.empty()) argv.insert(argv.end(), {"--fidelity", fidelity});
    commands.push_back(std::move(argv));
  }
  std::vector<ComparedVariant> results(variants.size());
  bool failed = false;
  run_children(
      commands, jobs,
      [&](size_t i, const ChildResult& child) {
        ComparedVariant& r = results[i];
        r.name = variants[i].name;
        r.overrides = variants[i].overrides;
        if (!child.ok()) {
          r.error = child.failure();
        } else {
          try {
            r.report = parse_report_json(child.out);
          } catch (const std::runtime_error& e) {
            r.error = e.what();
          }
        }
        failed = failed || !r.error.empty();
      },
      {}, 250, point_timeout);
  std::cout << format_comparison(results, scenario_path, report_format);
  return failed ? 1 : 0;
}

}  // namespace trident
