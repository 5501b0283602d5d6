// Subcommands. Each takes the arguments after the command name, returns the exit code, and
// throws ConfigError (bad input), boost::program_options::error (bad options) or
// SimulationError; main catches them.
#ifndef TRIDENT_CLI_COMMANDS_H_
#define TRIDENT_CLI_COMMANDS_H_

#include <string>
#include <vector>

namespace trident {

int run_simulate_command(const std::vector<std::string>& args);
// trident sweep SCENARIO [--vary K=V1,V2,...]... [--jobs N] [--out FILE] [--resume] [--shard I/N]
int run_sweep_command(const std::vector<std::string>& args);
// trident plan (SCENARIO | --cluster C --model M ...) [--fix K=V] [--vary K=V1,...] [--top K]
int run_plan_command(const std::vector<std::string>& args);
// trident compare SCENARIO (--variant NAME:K=V,...)... | --tp-placement intra,inter
int run_compare_command(const std::vector<std::string>& args);
// trident merge FILE...: joins sharded sweep CSVs in point order
int run_merge_command(const std::vector<std::string>& args);
// trident validate FILE... [--set K=V]...: every problem of every file, exit 2 if any
int run_validate_command(const std::vector<std::string>& args);
// trident schema [--format markdown|json]: every setting, from the settings table
int run_schema_command(const std::vector<std::string>& args);
// trident kernel --gpu GPU [--precision P] gemm M N K | attention ... | memory BYTES: the
// compute model's time and throughput for one kernel
int run_kernel_command(const std::vector<std::string>& args);
// trident collective --cluster C [--nodes N] [--gpus N] --op OP --size S | --sizes ... |
// -b S -e S [-f F]: collectives as the engine simulates them, printed like nccl-tests
int run_collective_command(const std::vector<std::string>& args);
// trident list [clusters|models|gpus|scenarios]: the library, one line per file
int run_list_command(const std::vector<std::string>& args);
// trident goodput SCENARIO (--train-tokens N | --train-days D) [--seed S] [--samples K]: time
// to train with failures, checkpoints and restarts (docs/goodput.md)
int run_goodput_command(const std::vector<std::string>& args);

}  // namespace trident

#endif  // TRIDENT_CLI_COMMANDS_H_
