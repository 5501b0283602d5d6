// trident list [clusters|models|gpus|stacks|scenarios]: the library's files, one line each.
#include <boost/program_options.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "config/diagnostics.h"
#include "config/references.h"
#include "config/scenario.h"
#include "core/text.h"
#include "workload/stage_work.h"

namespace po = boost::program_options;

namespace trident {
namespace {

struct Kind {
  const char* word;  // as given on the command line
  ConfigFileKind kind;
};

const Kind kKinds[] = {{"clusters", ConfigFileKind::kCluster},
                       {"models", ConfigFileKind::kModel},
                       {"gpus", ConfigFileKind::kGpu},
                       {"stacks", ConfigFileKind::kStack},
                       {"scenarios", ConfigFileKind::kScenario}};

std::string unquote(const std::string& text) {
  if (text.size() >= 2 && (text.front() == '"' || text.front() == '\'') &&
      text.back() == text.front()) {
    return text.substr(1, text.size() - 2);
  }
  return text;
}

// What the file is: its top-level `description:`, else its first comment line.
std::string description_of(const std::string& path) {
  std::ifstream in(path);
  std::string line, comment;
  while (std::getline(in, line)) {
    if (line.rfind("description:", 0) == 0) return unquote(trim(line.substr(12)));
    if (comment.empty() && line.rfind("#", 0) == 0) comment = trim(line.substr(1));
  }
  return comment;
}

std::string fixed(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// How big it is: GPUs, parameters, memory; "invalid: ..." when the file does not load.
std::string size_of(const LibraryEntry& entry, ConfigFileKind kind) {
  Diagnostics diag;
  const CheckedConfigFile file = check_config_file(entry.path, {}, &diag);
  if (!diag.empty()) return "invalid (trident validate " + entry.path + ")";
  const Scenario& s = file.specs;
  switch (kind) {
    case ConfigFileKind::kCluster:
      return std::to_string(s.cluster.total_gpus()) + " GPUs (" + std::to_string(s.cluster.nodes) +
             " x " + std::to_string(s.cluster.gpus_per_node) + " " + s.cluster.gpu.name + ")";
    case ConfigFileKind::kModel:
      return fixed("%.2fB parameters", model_params(s.model) / 1e9);
    case ConfigFileKind::kGpu: {
      std::string text = fixed("%.0f GiB", s.cluster.gpu.memory_bytes / double(1ull << 30));
      const auto bf16 = s.cluster.gpu.peak_flops.find(Precision::kBf16);
      if (bf16 != s.cluster.gpu.peak_flops.end()) {
        text += fixed(", %.0f TFLOP/s bf16", bf16->second / 1e12);
      }
      return text;
    }
    case ConfigFileKind::kScenario:
      return std::to_string(s.plan.gpus()) + " GPUs, " + s.model.name + " on " + s.cluster.name;
    case ConfigFileKind::kStack:
      return std::string("elementwise ") + elementwise_kernels_name(s.plan.stack.elementwise) +
             ", attention " + stack_attention_name(s.plan.stack.attention);
    case ConfigFileKind::kPlan:
      break;
  }
  return "";
}

std::string padded(const std::string& text, std::size_t width) {
  return text.size() >= width ? text + "  " : text + std::string(width + 2 - text.size(), ' ');
}

void print_kind(const Kind& kind, bool heading) {
  const std::vector<LibraryEntry> entries = library_entries(kind.kind);
  struct Row {
    std::string name, what, size, path;
  };
  std::vector<Row> rows;
  std::size_t widths[3] = {0, 0, 0};
  for (const LibraryEntry& e : entries) {
    Row r{e.name, excerpt(description_of(e.path), 70), size_of(e, kind.kind), e.path};
    widths[0] = std::max(widths[0], r.name.size());
    widths[1] = std::max(widths[1], r.what.size());
    widths[2] = std::max(widths[2], r.size.size());
    rows.push_back(std::move(r));
  }
  if (heading) std::cout << kind.word << ":\n";
  if (rows.empty()) std::cout << "  (none)\n";
  for (const Row& r : rows) {
    std::cout << "  " << padded(r.name, widths[0]) << padded(r.what, widths[1])
              << padded(r.size, widths[2]) << r.path << "\n";
  }
}

}  // namespace

int run_list_command(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: trident list [clusters|models|gpus|stacks|scenarios]\n\n"
      "Lists the library: the files a scenario, --set, --vary or --cluster may name instead of\n"
      "giving a path (`cluster: dgx-h100`), one line each: name, what it is, size, file.\n"
      "Names are searched in each directory of TRIDENT_PATH (colon-separated), then the\n"
      "installed library (<prefix>/share/trident), then -- only for a trident still in its\n"
      "build tree, never an installed one -- the source tree's configs/ and scenarios/; the\n"
      "first file of a name wins.\n\noptions");
  opts.add_options()("help,h", "show this help");
  std::vector<std::string> positional;
  po::variables_map vm;
  if (!parse_command_line(args, opts, 1, "", &positional, &vm)) return 0;
  if (positional.empty()) {
    for (const Kind& k : kKinds) print_kind(k, true);
    return 0;
  }
  for (const Kind& k : kKinds) {
    const std::string word = k.word;
    if (positional.front() == word || positional.front() + "s" == word) {
      print_kind(k, false);
      return 0;
    }
  }
  throw po::error("expected clusters, models, gpus, stacks or scenarios, not '" +
                  positional.front() + "'");
}

}  // namespace trident
