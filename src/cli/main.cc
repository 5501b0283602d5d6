// trident command line: subcommands, option parsing, the one place errors are caught.
#include <boost/program_options.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/errors.h"

namespace {

const char* kUsage =
    "trident: simulate one training step of a transformer on a GPU cluster.\n"
    "\n"
    "usage: trident <command> [options]\n"
    "\n"
    "commands:\n"
    "  simulate SCENARIO   simulate one 3D-parallel training step and print the report\n"
    "  sweep SCENARIO      simulate every point of a sweep (--vary K=V1,V2,...), one CSV row each\n"
    "  plan [SCENARIO]     find the fastest plans that fit (--cluster, --model, --nodes, --top)\n"
    "  compare SCENARIO    simulate variants side by side (--variant, --tp-placement intra,inter)\n"
    "  goodput SCENARIO    time to train with failures, checkpoints and restarts (--train-tokens)\n"
    "  merge FILE...       join the CSV files of a sharded sweep (sweep --shard I/N)\n"
    "  validate FILE...    check scenario, cluster, GPU, model and plan files; list every problem\n"
    "  list [KIND]         list the library (clusters, models, gpus, scenarios) usable by name\n"
    "  schema              print every setting: key, type, default, range, doc (docs/schema.md)\n"
    "  kernel OP ...       time one GEMM, attention or memory-bound kernel on one GPU\n"
    "  collective ...      simulate a collective over a cluster's GPUs, printed like nccl-tests\n"
    "\n"
    "Run `trident <command> --help` for the options of a command; `trident --version` prints\n"
    "the version.\n"
    "Exit codes: 0 success, 1 simulation failure, 2 bad input.\n";

// Flushes standard output and returns whether everything written to it arrived (a full disk or
// a closed pipe fails here, often only at this last flush). Prints the reason when not.
bool stdout_written() {
  errno = 0;
  const bool ok =
      static_cast<bool>(std::cout.flush()) && std::fflush(stdout) == 0 && std::ferror(stdout) == 0;
  if (ok) return true;
  if (errno == 0) {
    // A large report failed while it was written (the stream has kept its error since and
    // errno has moved on): provoke the failure once more to learn its reason.
    std::clearerr(stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }
  std::cerr << "trident: cannot write to standard output"
            << (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()) << "\n";
  return false;
}

int run_command(const std::string& command, const std::vector<std::string>& args) {
  if (command == "simulate") return trident::run_simulate_command(args);
  if (command == "sweep") return trident::run_sweep_command(args);
  if (command == "plan") return trident::run_plan_command(args);
  if (command == "compare") return trident::run_compare_command(args);
  if (command == "merge") return trident::run_merge_command(args);
  if (command == "validate") return trident::run_validate_command(args);
  if (command == "schema") return trident::run_schema_command(args);
  if (command == "kernel") return trident::run_kernel_command(args);
  if (command == "collective") return trident::run_collective_command(args);
  if (command == "list") return trident::run_list_command(args);
  if (command == "goodput") return trident::run_goodput_command(args);
  std::cerr << "trident: unknown command '" << command << "'\n\n" << kUsage;
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsage;
    return stdout_written() ? 0 : 1;
  }
  if (command == "--version" || command == "version") {
    std::cout << "trident " << TRIDENT_VERSION << "\n";
    return stdout_written() ? 0 : 1;
  }
  std::vector<std::string> args(argv + 2, argv + argc);
  try {
    const int code = run_command(command, args);
    // A report that did not reach its reader is a failure, whatever the command computed.
    return stdout_written() ? code : 1;
  } catch (const trident::ConfigError& e) {
    std::cerr << "trident: " << e.what() << "\n";
    return 2;
  } catch (const boost::program_options::error& e) {
    std::cerr << "trident " << command << ": " << e.what() << " (see trident " << command
              << " --help)\n";
    return 2;
  } catch (const trident::SimulationError& e) {
    std::cerr << "trident: simulation failed: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "trident: error: " << e.what() << "\n";
    return 1;
  }
}
