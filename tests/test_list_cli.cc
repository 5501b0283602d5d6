// End-to-end tests of `trident list` and of library names on the command line: scenarios
// simulated by name, whole sections swapped with --set, --vary and --variant, unknown names.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_runner.h"

using trident::testing::run_trident;

TEST_CASE("trident list prints the library, one line per file", "[list]") {
  const auto all = run_trident({"list"});
  REQUIRE(all.code == 0);
  for (const char* heading : {"clusters:\n", "models:\n", "gpus:\n", "scenarios:\n"}) {
    CHECK(all.out.find(heading) != std::string::npos);
  }
  const auto clusters = run_trident({"list", "clusters"});
  REQUIRE(clusters.code == 0);
  std::istringstream lines(clusters.out);
  std::string line, h100;
  int count = 0;
  while (std::getline(lines, line)) {
    ++count;
    if (line.find("  dgx-h100 ") == 0) h100 = line;
  }
  CHECK(count >= 6);
  CHECK_THAT(h100, Catch::Contains("NVIDIA DGX H100 SuperPOD"));
  CHECK_THAT(h100, Catch::Contains("1024 GPUs (128 x 8 H100-SXM5-80GB)"));
  CHECK_THAT(h100, Catch::EndsWith("configs/clusters/dgx-h100.yaml"));
  CHECK_THAT(run_trident({"list", "models"}).out, Catch::Contains("70.55B parameters"));
  CHECK_THAT(run_trident({"list", "gpus"}).out, Catch::Contains("80 GiB, 989 TFLOP/s bf16"));
  CHECK_THAT(run_trident({"list", "scenario"}).out,
             Catch::Contains("512 GPUs, llama3-70b on dgx-h100"));
  const auto bad = run_trident({"list", "plans"});
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("expected clusters, models, gpus, stacks or scenarios"));
}

TEST_CASE("GB300 NVL72 and HGX B300 are in the library and simulate by name", "[list]") {
  const auto clusters = run_trident({"list", "clusters"});
  REQUIRE(clusters.code == 0);
  CHECK_THAT(clusters.out, Catch::Contains("576 GPUs (144 x 4 GB300)"));
  CHECK_THAT(clusters.out, Catch::Contains("1024 GPUs (128 x 8 B300)"));
  const auto gpus = run_trident({"list", "gpus"}).out;
  CHECK_THAT(gpus, Catch::Contains("268 GiB, 2500 TFLOP/s bf16"));  // GB300: 288 GB
  CHECK_THAT(gpus, Catch::Contains("268 GiB, 2250 TFLOP/s bf16"));  // B300
  CHECK_THAT(run_trident({"list", "scenarios"}).out,
             Catch::Contains("128 GPUs, llama3-70b on gb300-nvl72"));
  const auto rack = run_trident({"simulate", "llama3-70b-gb300-nvl72", "--format", "json"});
  REQUIRE(rack.code == 0);
  const auto r = nlohmann::json::parse(rack.out);
  CHECK(r["cluster"] == "gb300-nvl72");
  CHECK(r["gpus"] == 128);
  CHECK(r["step_time_s"].get<double>() > 1);
  CHECK(r["fits_in_memory"] == true);
  const auto node = run_trident(
      {"simulate", "llama3-8b-dgx-h100", "--set", "cluster=hgx-b300", "--format", "json"});
  REQUIRE(node.code == 0);
  const auto n = nlohmann::json::parse(node.out);
  CHECK(n["cluster"] == "hgx-b300");
  CHECK(n["gpus"] == 8);
  CHECK(n["step_time_s"].get<double>() > 1);
  CHECK(n["fits_in_memory"] == true);
}

TEST_CASE("a scenario by name, with its cluster swapped by --set", "[list]") {
  const auto r = run_trident(
      {"simulate", "llama3-70b-dgx-h100", "--set", "cluster=hgx-b200", "--format", "json"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["cluster"] == "hgx-b200");
  CHECK(j["gpus"] == 512);
  const auto unknown = run_trident({"simulate", "llama3-70b-dgx-h100", "--set", "model=llama3-8c"});
  CHECK(unknown.code == 2);
  CHECK_THAT(unknown.err, Catch::Contains("`llama3-8c` is neither a file nor a model in the "
                                          "library (did you mean `llama3-8b`?)"));
  const auto no_scenario = run_trident({"simulate", "llama3-70b-dgx"});
  CHECK(no_scenario.code == 2);
  CHECK_THAT(no_scenario.err, Catch::Contains("did you mean `llama3-70b-dgx-h100`?"));
}

TEST_CASE("A100 against H100 against B200 for one plan: --vary and --variant", "[list]") {
  const auto sweep = run_trident(
      {"sweep", "llama3-70b-dgx-h100", "--vary", "cluster=dgx-a100-superpod,dgx-h100,hgx-b200"});
  REQUIRE(sweep.code == 0);
  CHECK_THAT(sweep.out, Catch::StartsWith("point,cluster,step_time_s"));
  CHECK_THAT(sweep.out, Catch::Contains("\n2,hgx-b200,"));
  const auto compare =
      run_trident({"compare", "llama3-70b-dgx-h100", "--variant", "a100:cluster=dgx-a100-superpod",
                   "--variant", "h100:cluster=dgx-h100", "--variant", "b200:cluster=hgx-b200"});
  REQUIRE(compare.code == 0);
  CHECK_THAT(compare.out, Catch::Contains("b200  cluster=hgx-b200"));
  CHECK_THAT(compare.out, Catch::Contains("llama3-70b on dgx-a100-superpod / dgx-h100 / hgx-b200"));
  // Columns as wide as the plan label, "t=8 p=4 d=16".
  CHECK_THAT(compare.out,
             Catch::Contains("  cluster                 dgx-a100-superpod      dgx-h100"));
}

TEST_CASE("stack profiles are in the library and a bad one exits 2 naming its key", "[list]") {
  const auto stacks = run_trident({"list", "stacks"});
  REQUIRE(stacks.code == 0);
  CHECK_THAT(stacks.out, Catch::Contains("elementwise eager, attention sdpa"));
  CHECK_THAT(stacks.out, Catch::Contains("configs/stacks/megatron-core.yaml"));
  const auto valid = run_trident({"validate", "torchtitan-compile"});
  CHECK(valid.code == 0);
  const auto bad = run_trident({"simulate", "tiny", "--set", "plan.stack=torchtitan", "--set",
                                "plan.stack.elementwise=jit"});
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("plan.stack.elementwise"));
  CHECK_THAT(bad.err, Catch::Contains("expected one of: fused, eager"));
}
