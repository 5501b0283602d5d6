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

TEST_CASE("an output that is also an input is refused with exit 2", "[cli][outputs][inputs]") {
  const std::string dir = scratch("inputs");
  const std::string scenario = dir + "/v.yaml";
  {
    std::string text = read_file(std::string(TRIDENT_SOURCE_DIR) + "/scenarios/tiny.yaml");
    const std::string rel = "../configs/";
    // Library names need no rewriting; relative paths are made absolute for the copy.
    if (text.find(rel) != std::string::npos) {
      text.replace(text.find(rel), rel.size(), std::string(TRIDENT_SOURCE_DIR) + "/configs/");
    }
    std::ofstream(scenario, std::ios::binary) << text;
  }
  const std::string original = read_file(scenario);
  fs::create_symlink("v.yaml", dir + "/link.yaml");
  const std::string cluster = std::string(TRIDENT_SOURCE_DIR) + "/configs/clusters/tiny-2node.yaml";
  const std::vector<std::vector<std::string>> cases = {
      {"sweep", scenario, "--vary", "plan.num_microbatches=1,2", "--out", scenario},
      {"sweep", scenario, "--vary", "plan.num_microbatches=1,2", "--out", dir + "/link.yaml"},
      {"sweep", scenario, "--vary", "plan.num_microbatches=1,2", "--out", scenario, "--resume"},
      {"simulate", scenario, "--trace", scenario},
      {"simulate", scenario, "--timeline", dir + "/link.yaml"},
      {"simulate", scenario, "--trace", cluster},  // a file the scenario references
  };
  for (const auto& args : cases) {
    const CliResult r = run_trident(args);
    INFO(args.front() << " ... " << args.back() << " -> " << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("names an input of this run") != std::string::npos);
    CHECK(r.out.empty());
    CHECK(read_file(scenario) == original);
  }
  CHECK(fs::is_regular_file(cluster));
  // The same new file for --trace and --timeline is refused; /dev/null takes both.
  const CliResult both =
      run_trident({"simulate", scenario, "--trace", dir + "/x", "--timeline", dir + "/x"});
  CHECK(both.code == 2);
  CHECK(both.err.find("same file") != std::string::npos);
  CHECK(
      run_trident({"simulate", scenario, "--trace", "/dev/null", "--timeline", "/dev/null"}).code ==
      0);
  CHECK(fs::is_character_file("/dev/null"));
  fs::remove_all(dir);
}

TEST_CASE("trace: --trace through a symlink writes the file it names, long names work",
          "[cli][outputs]") {
  const std::string dir = scratch("trace_targets");
  fs::create_symlink("real.json", dir + "/link.json");
  CliResult r = run_trident({"simulate", "scenarios/tiny.yaml", "--trace", dir + "/link.json"});
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(fs::is_symlink(dir + "/link.json"));
  CHECK(fs::is_regular_file(dir + "/real.json"));
  // A 255-byte name (NAME_MAX): its temporary name must not be longer.
  const std::string longest = dir + "/" + std::string(250, 't') + ".json";
  r = run_trident({"simulate", "scenarios/tiny.yaml", "--trace", longest});
  CHECK(r.code == 0);
  CHECK(fs::is_regular_file(longest));
  r = run_trident({"simulate", "scenarios/tiny.yaml", "--trace", longest + "x"});
  CHECK(r.code == 2);
  CHECK(r.err.find("longer than") != std::string::npos);
  CHECK(r.out.empty());  // refused before simulating
  // A sweep's --out needs room for its FILE.manifest beside it.
  r = run_trident({"sweep", "scenarios/tiny.yaml", "--out", dir + "/" + std::string(250, 's')});
  CHECK(r.code == 2);
  CHECK(r.err.find("its manifest FILE.manifest: file name is") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("a FIFO as input is refused at once, never waited on", "[cli][outputs][fifo]") {
  const std::string dir = scratch("fifo");
  const std::string fifo = dir + "/f.yaml";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  const std::string scenario = dir + "/s.yaml";
  std::ofstream(scenario) << "cluster: f.yaml\nmodel: " << TRIDENT_SOURCE_DIR
                          << "/configs/models/gpt-1.7b.yaml\nplan: {tensor_parallel: 1}\n";
  const std::vector<std::vector<std::string>> cases = {
      {"simulate", fifo},
      {"validate", fifo},
      {"simulate", scenario},  // a referenced file
      {"sweep", "scenarios/tiny.yaml", "--set", "cluster.gpu=" + fifo, "--vary",
       "plan.num_microbatches=1,2"},
      {"merge", fifo},
  };
  for (const auto& args : cases) {
    const CliResult r = run_trident(args);  // a hang here fails the test by ctest's timeout
    INFO(args.front() << " " << args[1] << " -> " << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("f.yaml") != std::string::npos);
    CHECK((r.err.find("FIFO") != std::string::npos ||
           r.err.find("not a regular file") != std::string::npos));
  }
  fs::remove_all(dir);
}
