// End-to-end tests of `trident validate`: every corpus input fails with exit 2 and the loader's
// first message, every problem of a file is listed, and the shipped files pass.
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

TEST_CASE("every corpus input fails `trident validate` with exit 2 and the same first message",
          "[cli][bad_inputs][validate]") {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(TRIDENT_SOURCE_DIR) / "tests/bad_inputs")) {
    if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 40);
  for (const fs::path& file : files) {
    std::ifstream in(file);
    std::string line;
    std::vector<std::string> sets;
    std::getline(in, line);
    const std::string expect = line.substr(10);
    while (std::getline(in, line) && line.rfind("# ", 0) == 0) {
      if (line.rfind("# set: ", 0) == 0) {
        sets.push_back("--set");
        sets.push_back(line.substr(7));
      }
    }
    std::vector<std::string> args = {"simulate", fs::relative(file, TRIDENT_SOURCE_DIR).string()};
    args.insert(args.end(), sets.begin(), sets.end());
    const Result sim = run_trident(args);
    args[0] = "validate";
    const Result val = run_trident(args);
    INFO(file.filename().string() << ": " << val.err);
    CHECK(val.code == 2);
    CHECK(val.out.empty());
    CHECK(val.err.find(expect) != std::string::npos);
    // simulate prints "trident: <first problem>"; validate lists it first.
    REQUIRE(sim.err.rfind("trident: ", 0) == 0);
    CHECK(val.err.rfind(sim.err.substr(9), 0) == 0);
  }
}

TEST_CASE("validate lists every problem of a file and an ok line for good files",
          "[cli][validate]") {
  const std::string path = std::filesystem::temp_directory_path() /
                           ("trident_validate_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << "cluster: " << TRIDENT_SOURCE_DIR
                      << "/configs/clusters/dgx-a100-superpod.yaml\n"
                         "model:\n  name: m\n  num_layers: 0\n  hidden_size: 12 GB\n"
                         "  num_attention_heads: 96\n  seq_length: 2048\n  vocab_size: 51200\n"
                         "  vocab_size: 3\nplan:\n  tensor_parallel: 8\n  micro_batch_size: 1\n"
                         "  global_batch_size: 16\n  schedule: 1F1B\n  precision: bf32\n"
                         "  colour: blue\n";
  const Result r =
      run_trident({"validate", "scenarios/tiny.yaml", path, "configs/models/llama3-8b.yaml"});
  std::filesystem::remove(path);
  INFO(r.err);
  CHECK(r.code == 2);
  for (const char* fragment :
       {":9:3: model.vocab_size: duplicate key", ":4:15: model.num_layers: 0 is too small",
        ":5:16: model.hidden_size: `12 GB` is not an integer", ":16:3: plan.colour: unknown key",
        ":14:13: plan.schedule: unknown value `1F1B` (did you mean `1f1b`?",
        ":15:14: plan.precision: unknown value `bf32`",
        "trident validate: 6 problems in 1 of 3 files"}) {
    CHECK(r.err.find(fragment) != std::string::npos);
  }
  CHECK(r.out.find("scenarios/tiny.yaml: ok (scenario: tiny-gpt on tiny-2node") !=
        std::string::npos);
  CHECK(r.out.find("configs/models/llama3-8b.yaml: ok (model: llama3-8b, 8.03B parameters)") !=
        std::string::npos);
}

TEST_CASE("validate passes every shipped config and scenario", "[cli][validate]") {
  namespace fs = std::filesystem;
  std::vector<std::string> args = {"validate"};
  for (const char* dir :
       {"configs/gpus", "configs/clusters", "configs/models", "configs/stacks", "scenarios"}) {
    for (const auto& e : fs::directory_iterator(fs::path(TRIDENT_SOURCE_DIR) / dir)) {
      if (e.path().extension() == ".yaml") {
        args.push_back(fs::relative(e.path(), TRIDENT_SOURCE_DIR).string());
      }
    }
  }
  REQUIRE(args.size() > 30);
  const Result r = run_trident(args);
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  CHECK(static_cast<size_t>(std::count(r.out.begin(), r.out.end(), '\n')) == args.size() - 1);
  CHECK(run_trident({"validate"}).code == 2);
  CHECK(run_trident({"validate", "--help"}).code == 0);
}
