// The process pool (cli/child_runner): commands run in parallel, each one's output and status.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cli/child_runner.h"

using namespace trident;

TEST_CASE("run_children runs commands in parallel and reports each", "[sweep][process]") {
  std::vector<std::vector<std::string>> commands;
  for (int i = 0; i < 5; ++i) {
    commands.push_back({"/bin/sh", "-c",
                        "echo out" + std::to_string(i) + "; echo 'trident: bad " +
                            std::to_string(i) + "' >&2; exit " + std::to_string(i % 3)});
  }
  commands.push_back({"/nonexistent/program"});
  commands.push_back({"/bin/sh", "-c", "kill -9 $$"});
  std::vector<ChildResult> results(commands.size());
  std::vector<int> calls(commands.size(), 0);
  run_children(commands, 3, [&](size_t i, const ChildResult& r) {
    results[i] = r;
    ++calls[i];
  });
  for (size_t i = 0; i < commands.size(); ++i) CHECK(calls[i] == 1);
  CHECK(results[0].ok());
  CHECK(results[0].out == "out0\n");
  CHECK(results[1].exit_code == 1);
  CHECK(results[1].failure() == "bad 1");
  CHECK(results[5].exit_code == 127);
  CHECK(results[5].failure().find("cannot execute") != std::string::npos);
  CHECK(results[6].signal == 9);
  CHECK(results[6].failure() == "killed by signal 9");
  CHECK(available_cpus() >= 1);
}
