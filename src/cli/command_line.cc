#include "cli/command_line.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "core/errors.h"
#include "core/input_files.h"

namespace po = boost::program_options;

namespace trident {

bool parse_command_line(const std::vector<std::string>& args, const po::options_description& opts,
                        int max_positional, const std::string& missing,
                        std::vector<std::string>* positional, po::variables_map* vm) {
  po::options_description hidden;
  hidden.add_options()("positional", po::value(positional)->composing());
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("positional", max_positional);
  po::store(po::command_line_parser(args).options(all).positional(pos).run(), *vm);
  if (vm->count("help")) {
    std::cout << opts << "\n";
    return false;
  }
  po::notify(*vm);
  if (positional->empty() && !missing.empty()) throw po::error(missing);
  // A name no file can have: said plainly here, not as the system's "File name too long".
  for (const std::string& p : *positional) {
    const std::string problem = path_length_problem(p);
    if (problem.empty()) continue;
    SourceLocation where;
    where.file = excerpt(p, 60);
    throw ConfigError(where, "cannot be a file or library name: " + problem);
  }
  return true;
}

void check_fidelity_option(const std::string& fidelity) {
  if (!fidelity.empty() && fidelity != "fast" && fidelity != "full") {
    throw po::error("--fidelity must be fast or full, not '" + fidelity + "'");
  }
}

void check_not_an_input(const std::string& option, const std::string& path,
                        const std::vector<std::string>& more_inputs) {
  if (path.empty()) return;
  std::string input;
  if (const std::optional<InputFile> f = input_file_at(path)) input = f->path;
  for (const std::string& other : more_inputs) {
    if (input.empty() && same_file(path, other)) input = other;
  }
  if (input.empty()) return;
  SourceLocation where;
  where.file = path;
  throw ConfigError(where, "--" + option + " names an input of this run (" + input +
                               "): writing it would destroy it; choose another file");
}

void add_training_options(po::options_description* opts, TrainingOptions* out) {
  opts->add_options()("train-tokens", po::value(&out->tokens),
                      "tokens of the whole training run (15T, 300B, 2e12): adds days of "
                      "training and GPU-hours (= --set plan.train_tokens=...)")(
      "gpu-hour-price", po::value(&out->price),
      "price of one GPU-hour: with --train-tokens adds the cost (= --set "
      "plan.gpu_hour_price=...)");
}

void append_training_sets(const TrainingOptions& options, std::vector<std::string>* sets) {
  if (!options.tokens.empty()) {
    std::string text = options.tokens;
    double scale = 1;
    const char suffix = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
    const std::string suffixes = "KMBGTP";
    const double scales[] = {1e3, 1e6, 1e9, 1e9, 1e12, 1e15};
    if (suffixes.find(suffix) != std::string::npos) {
      scale = scales[suffixes.find(suffix)];
      text.pop_back();
    }
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !(value > 0)) {
      throw po::error("--train-tokens: expected a token count such as 15T, 300B or 2e12, not '" +
                      options.tokens + "'");
    }
    char number[64];
    std::snprintf(number, sizeof number, "%.17g", value * scale);
    sets->push_back(std::string("plan.train_tokens=") + number);
  }
  if (!options.price.empty()) sets->push_back("plan.gpu_hour_price=" + options.price);
}

}  // namespace trident
