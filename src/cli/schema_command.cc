// trident schema [--format json|markdown]: every setting, from the one settings table.
#include <boost/program_options.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "config/settings_doc.h"

namespace po = boost::program_options;

namespace trident {

int run_schema_command(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: trident schema [--format markdown|json]\n\n"
      "Prints every setting of scenario, cluster, GPU, model and plan files: key, type, unit,\n"
      "default, range, description and the Megatron-LM / Hugging Face name. The markdown form\n"
      "is docs/schema.md; the JSON form is a list of objects with key, section, type, unit,\n"
      "default, range, required, doc, megatron and hugging_face.\n\noptions");
  std::string format = "markdown";
  opts.add_options()("help,h", "show this help")(
      "format", po::value(&format)->default_value("markdown"), "markdown or json");
  po::variables_map vm;
  std::vector<std::string> positional;
  if (!parse_command_line(args, opts, 0, "", &positional, &vm)) return 0;
  if (format == "json") {
    std::cout << settings_json().dump(2) << "\n";
  } else if (format == "markdown") {
    std::cout << settings_markdown();
  } else {
    throw po::error("--format must be markdown or json, not '" + format + "'");
  }
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "trident schema: cannot write to standard output\n";
    return 1;
  }
  return 0;
}

}  // namespace trident
