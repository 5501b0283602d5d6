// trident validate FILE...: checks clusters, GPUs, models, plans and scenarios without
// simulating, and lists every problem of every file.
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "config/diagnostics.h"
#include "config/scenario.h"
#include "lowering/shortcuts.h"
#include "workload/stage_work.h"

namespace po = boost::program_options;

namespace trident {
namespace {

std::string billions(double count) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2fB", count / 1e9);
  return text;
}

// The short description printed after "ok".
std::string summary(const CheckedConfigFile& file) {
  const Scenario& s = file.specs;
  const std::string kind = config_file_kind_name(*file.kind);
  switch (*file.kind) {
    case ConfigFileKind::kScenario: {
      const PlanSpec& p = s.plan;
      return kind + ": " + s.model.name + " on " + s.cluster.name +
             ", t=" + std::to_string(p.tensor) +
             (p.context > 1 ? " cp=" + std::to_string(p.context) : std::string()) +
             " p=" + std::to_string(p.pipeline) + " d=" + std::to_string(p.data) + " (" +
             std::to_string(p.gpus()) + " of " + std::to_string(s.cluster.total_gpus()) +
             " GPUs), " + std::to_string(p.num_microbatches) + " micro-batches of " +
             std::to_string(p.micro_batch_size);
    }
    case ConfigFileKind::kCluster:
      return kind + ": " + s.cluster.name + ", " + std::to_string(s.cluster.nodes) + " nodes x " +
             std::to_string(s.cluster.gpus_per_node) + " " + s.cluster.gpu.name;
    case ConfigFileKind::kGpu:
      return kind + ": " + s.cluster.gpu.name;
    case ConfigFileKind::kModel:
      return kind + ": " + s.model.name + ", " + billions(model_params(s.model)) + " parameters";
    case ConfigFileKind::kStack:
      return kind + ": " + s.plan.stack.name;
    case ConfigFileKind::kPlan:
      return kind + ": t=" + std::to_string(s.plan.tensor) +
             " p=" + std::to_string(s.plan.pipeline) + ", fields only (a scenario checks the rest)";
  }
  return kind;
}

}  // namespace

int run_validate_command(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: trident validate FILE... [--set K=V]...\n\n"
      "Checks scenario, cluster, GPU, model (YAML or Hugging Face config.json) and plan files\n"
      "without simulating. Prints `FILE: ok (...)` for a sound file; otherwise every problem,\n"
      "one per line: `file:line:col: key.path: what is wrong (what is expected)`.\n"
      "Exit code 2 when any file has a problem.\n\noptions");
  std::vector<std::string> sets, files;
  opts.add_options()("help,h", "show this help")(
      "set", po::value(&sets)->composing(),
      "override a field after the files are loaded (repeatable): every scenario takes each; a "
      "cluster or model file takes the cluster.* or model.* ones (e.g. model.seq_length for a "
      "Hugging Face config.json, which has no training length)");
  po::variables_map vm;
  if (!parse_command_line(args, opts, -1, "missing FILE (expected one or more files to check)",
                          &files, &vm)) {
    return 0;
  }

  std::size_t problems = 0, bad_files = 0;
  for (const std::string& file : files) {
    Diagnostics diag;
    const CheckedConfigFile checked = check_config_file(file, sets, &diag);
    if (diag.empty() && checked.kind == ConfigFileKind::kScenario) {
      // What `simulate` checks before simulating (at its default fidelity, fast).
      attempt(&diag, [&] { check_simulation_activities(checked.specs, Fidelity::kFast); });
    }
    if (diag.empty()) {
      std::cout << file << ": ok (" << summary(checked) << ")\n";
      continue;
    }
    ++bad_files;
    problems += diag.count();
    for (const Problem& p : diag.problems()) std::cerr << p.text() << "\n";
    if (diag.count() > diag.problems().size()) {
      std::cerr << file << ": " << diag.count() - diag.problems().size()
                << " more problems not listed\n";
    }
  }
  if (problems == 0) return 0;
  std::cerr << "trident validate: " << problems << (problems == 1 ? " problem" : " problems")
            << " in " << bad_files << " of " << files.size()
            << (files.size() == 1 ? " file" : " files") << "\n";
  return 2;
}

}  // namespace trident
