// Where the commands' outputs go: standard output that cannot be written (a full disk, issue 13
// item 3), outputs that are also inputs (item 4), device nodes and symlinks as --trace targets
// (item 2), long names (item 15) and inputs that are not regular files (item 9).
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace {

namespace fs = std::filesystem;
using trident::testing::CliResult;
using trident::testing::read_file;
using trident::testing::run_trident;
using trident::testing::shell_quote;

std::string scratch(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("trident_outputs_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

// Runs `trident ARGS >STDOUT_PATH` from the source directory; `out` stays empty.
CliResult run_trident_to(const std::vector<std::string>& args, const std::string& stdout_path) {
  const std::string err_file =
      (fs::temp_directory_path() / ("trident_outputs_" + std::to_string(::getpid()) + ".err"))
          .string();
  std::string cmd = "cd " + shell_quote(TRIDENT_SOURCE_DIR) + " && " + shell_quote(TRIDENT_BINARY);
  for (const std::string& a : args) cmd += " " + shell_quote(a);
  cmd += " >" + shell_quote(stdout_path) + " 2>" + shell_quote(err_file);
  const int status = std::system(cmd.c_str());
  CliResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_file(err_file);
  fs::remove(err_file);
  return r;
}

}  // namespace

TEST_CASE("every command fails with exit 1 when standard output cannot be written",
          "[cli][outputs][stdout]") {
  REQUIRE(fs::exists("/dev/full"));
  const std::string dir = scratch("stdout");
  const std::string csv = dir + "/s.csv";
  REQUIRE(
      run_trident_to({"sweep", "scenarios/tiny.yaml", "--vary", "plan.num_microbatches=2,4"}, csv)
          .code == 0);
  const std::vector<std::vector<std::string>> commands = {
      {"simulate", "scenarios/tiny.yaml", "--format", "json"},
      {"simulate", "scenarios/tiny.yaml"},
      {"validate", "scenarios/tiny.yaml"},
      {"compare", "scenarios/tiny.yaml", "--variant", "a:", "--variant",
       "b:plan.num_microbatches=4"},
      {"merge", csv},
      {"sweep", "scenarios/tiny.yaml", "--vary", "plan.num_microbatches=2,4"},
      {"--help"},
      {"simulate", "--help"},
  };
  for (const auto& args : commands) {
    const CliResult r = run_trident_to(args, "/dev/full");
    INFO(args.front() << " " << args.back() << " -> " << r.err);
    CHECK(r.code == 1);
    CHECK(r.err.find("standard output") != std::string::npos);
    CHECK(r.err.find("No space left") != std::string::npos);
  }
  fs::remove_all(dir);
}
