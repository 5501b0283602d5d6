// Subcommands. Each takes the arguments after the command name, returns the exit code, and
// throws ConfigError (bad input), boost::program_options::error (bad options) or
// SimulationError; main catches them.
#ifndef TRIDENT_CLI_COMMANDS_H_
#define TRIDENT_CLI_COMMANDS_H_

#include <string>
#include <vector>

namespace trident {

int run_simulate_command(const std::vector<std::string>& args);

}  // namespace trident

#endif  // TRIDENT_CLI_COMMANDS_H_
