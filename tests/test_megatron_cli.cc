// End-to-end tests of `trident simulate --megatron-args FILE --cluster NAME`: the Llama 3 70B
// launch line on 64 DGX H100 nodes, --print-scenario, --verbose, stdin, refusals.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"

using trident::testing::run_trident;

namespace {
const char* const kLine = "tests/data/megatron/llama3-70b.sh";
}

TEST_CASE("a Megatron-LM launch line simulated on a named cluster", "[megatron][cli]") {
  const auto r = run_trident(
      {"simulate", "--megatron-args", kLine, "--cluster", "dgx-h100", "--format", "json"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["cluster"] == "dgx-h100");
  CHECK(j["gpus"] == 512);
  CHECK(j["tensor_parallel"] == 8);
  CHECK(j["num_microbatches"] == 64);
  // The same step as the shipped scenario but for Megatron's padded vocabulary (129024).
  const auto shipped = nlohmann::json::parse(
      run_trident({"simulate", "llama3-70b-dgx-h100", "--format", "json"}).out);
  CHECK(j["step_time_s"].get<double>() ==
        Approx(shipped["step_time_s"].get<double>()).epsilon(0.02));
}

TEST_CASE("megatron: --print-scenario writes YAML that simulates the same", "[megatron][cli]") {
  const auto printed = run_trident({"simulate", "--megatron-args", kLine, "--cluster", "dgx-h100",
                                    "--print-scenario", "--verbose"});
  REQUIRE(printed.code == 0);
  CHECK_THAT(printed.out, Catch::Contains("cluster: dgx-h100\n"));
  CHECK_THAT(printed.out, Catch::Contains("  cluster.nodes: 64"));
  CHECK_THAT(printed.out, Catch::Contains("  tensor_parallel: 8\n"));
  CHECK_THAT(printed.err, Catch::Contains("ignored: --lr 1.5e-4"));
}

TEST_CASE("bad Megatron input: exit 2, one message naming each argument", "[megatron][cli]") {
  const auto no_cluster = run_trident({"simulate", "--megatron-args", kLine});
  CHECK(no_cluster.code == 2);
  CHECK_THAT(no_cluster.err, Catch::Contains("--megatron-args needs --cluster"));
  const auto bad = run_trident(
      {"simulate", "--megatron-args", "tests/data/megatron/refused.sh", "--cluster", "dgx-h100"});
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("tests/data/megatron/refused.sh:4:62: --encoder-num-layers: "
                                      "changes the step but is not modelled, refused: "
                                      "--encoder-num-layers"));
  CHECK_THAT(bad.err, Catch::Contains("--cp-comm-type a2a+p2p"));
  // A value the scenario loader refuses is located at its argument in the launch file, not
  // in the YAML trident generated from it.
  const std::string script = (std::filesystem::temp_directory_path() /
                              ("trident_megatron_cli_" + std::to_string(::getpid()) + ".sh"))
                                 .string();
  std::ofstream(script)
      << "L=32\ntorchrun --nnodes 1 pretrain_gpt.py --num-layers $L --hidden-size 4096 \\\n"
         "  --num-attention-heads 32 --seq-length 4096 --vocab-size 32000 --micro-batch-size 1 \\\n"
         "  --global-batch-size 64 --bf16 --tensor-model-parallel-size 16\n";
  const auto located =
      run_trident({"simulate", "--megatron-args", script, "--cluster", "dgx-h100"});
  CHECK(located.code == 2);
  CHECK_THAT(located.err, Catch::Contains(".sh:4:33: --tensor-model-parallel-size "
                                          "(plan.tensor_parallel): "));
  std::filesystem::remove(script);
}

TEST_CASE("the launch line read from stdin", "[megatron][cli]") {
  using trident::testing::shell_quote;
  const std::string cmd = "cd " + shell_quote(TRIDENT_SOURCE_DIR) + " && " +
                          shell_quote(TRIDENT_BINARY) +
                          " simulate --megatron-args - --cluster hgx-b200 --format json < " + kLine;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  REQUIRE(::pclose(pipe) == 0);
  const auto j = nlohmann::json::parse(out);
  CHECK(j["scenario"] == "<stdin>");
  CHECK(j["cluster"] == "hgx-b200");
  CHECK(j["gpus"] == 512);
}
