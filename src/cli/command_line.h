// Option parsing shared by the subcommands.
#ifndef TRIDENT_CLI_COMMAND_LINE_H_
#define TRIDENT_CLI_COMMAND_LINE_H_

#include <boost/program_options.hpp>
#include <string>
#include <vector>

namespace trident {

// Parses `args` against `opts` (which must hold "help,h") plus positional arguments, at most
// `max_positional` of them (-1: any number), into *positional. Returns false when --help was
// given, after printing `opts` to stdout. Throws boost::program_options::error on a bad option,
// and with the message `missing` when no positional argument was given (unless `missing` is
// empty: none required). Throws ConfigError when a positional argument is longer than any
// file name can be (core/input_files.h path_length_problem).
bool parse_command_line(const std::vector<std::string>& args,
                        const boost::program_options::options_description& opts, int max_positional,
                        const std::string& missing, std::vector<std::string>* positional,
                        boost::program_options::variables_map* vm);

// Throws boost::program_options::error unless `fidelity` is empty, "fast" or "full".
void check_fidelity_option(const std::string& fidelity);

// Throws ConfigError (exit 2) naming `path` when it is the same file (device and inode, so
// through links too) as a configuration file read so far (core/input_files.h) or one of
// `more_inputs`. `option` names the output in the message ("trace", "out").
void check_not_an_input(const std::string& option, const std::string& path,
                        const std::vector<std::string>& more_inputs = {});
// --train-tokens and --gpu-hour-price, as given (empty: not given).
struct TrainingOptions {
  std::string tokens;
  std::string price;
};

// Adds --train-tokens and --gpu-hour-price to `opts`, stored in *out.
void add_training_options(boost::program_options::options_description* opts, TrainingOptions* out);

// Appends the given options to `sets` as plan.train_tokens / plan.gpu_hour_price overrides
// (15T -> 1.5e13; suffixes K, M, B or G, T, P). Throws boost::program_options::error when a
// value is not a number.
void append_training_sets(const TrainingOptions& options, std::vector<std::string>* sets);

}  // namespace trident

#endif  // TRIDENT_CLI_COMMAND_LINE_H_
