#include "cli/command_line.h"

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

}  // namespace trident
