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
