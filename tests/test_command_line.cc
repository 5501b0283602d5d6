// End-to-end tests of the command line (cli/command_line, cli/main): bad command lines exit 2
// with one message on stderr and nothing on stdout; --help exits 0.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace {

using Result = trident::testing::CliResult;
using trident::testing::read_file;
using trident::testing::run_trident;

}  // namespace

TEST_CASE("bad command lines exit 2 with one message", "[cli][bad_inputs]") {
  struct Case {
    std::vector<std::string> args;
    const char* fragment;
  };
  const Case cases[] = {
      {{"simulate"}, "missing SCENARIO"},
      {{"simulate", "scenarios/tiny.yaml", "--format", "xml"}, "--format must be"},
      {{"simulate", "scenarios/tiny.yaml", "--fidelity", "exact"}, "--fidelity must be"},
      {{"simulate", "scenarios/tiny.yaml", "--bogus"}, "unrecognised option"},
      {{"simulate", "no/such/file.yaml"}, "no/such/file.yaml"},
      {{"frobnicate"}, "unknown command"},
      {{"simulate", "scenarios/tiny.yaml", "--set", "plan.tensor_paralel=2"}, "did you mean"},
  };
  for (const Case& c : cases) {
    const Result r = run_trident(c.args);
    INFO(c.args.back() << " -> " << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(c.fragment) != std::string::npos);
    CHECK(r.out.empty());
  }
  CHECK(run_trident({"simulate", "--help"}).code == 0);
  CHECK(run_trident({"--help"}).code == 0);
}

TEST_CASE("a positional name longer than a file name can be exits 2 saying so",
          "[cli][bad_inputs]") {
  const std::string name(300, 'a');
  for (const std::vector<std::string>& args : {std::vector<std::string>{"simulate", name},
                                               {"validate", name},
                                               {"sweep", name},
                                               {"plan", name},
                                               {"simulate", "configs/" + name + "/x.yaml"}}) {
    const Result r = run_trident(args);
    INFO(r.err);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("300 bytes, longer than the 255") != std::string::npos);
    CHECK(r.err.find("File name too long") == std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  // 255 bytes is a name: not found, as any other.
  const Result ok_length = run_trident({"simulate", std::string(255, 'a') + "/x.yaml"});
  CHECK(ok_length.code == 2);
  CHECK(ok_length.err.find("longer than") == std::string::npos);
}

TEST_CASE("trident --version prints the version and exits 0", "[cli]") {
  for (const char* flag : {"--version", "version"}) {
    const Result r = run_trident({flag});
    CHECK(r.code == 0);
    CHECK(r.out.rfind("trident 0.", 0) == 0);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
  }
  CHECK(run_trident({"--help"}).out.find("--version") != std::string::npos);
}
