// Every command that prints a report key agrees with `trident simulate --format json`: the
// comparison (JSON, and its table's CP row) and the plan search's plans, on shipped scenarios.
#include <catch2/catch.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.h"

using namespace trident::testing;
using Json = nlohmann::ordered_json;

namespace {

// The shipped context-parallel scenario with 4 micro-batches per pipeline instead of 64: the
// same plan (t=8 cp=4 p=4 d=4), a few seconds to simulate.
const std::vector<std::string> kCp = {"scenarios/llama3-70b-32k-cp-dgx-h100.yaml", "--set",
                                      "plan.global_batch_size=16"};

Json simulate_json(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"simulate"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--format", "json"});
  const CliResult r = run_trident(argv);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return Json::parse(r.out);
}

}  // namespace

TEST_CASE("compare gives every key of simulate's report, equal", "[report][compare][cli]") {
  for (const std::vector<std::string>& scenario :
       {std::vector<std::string>{"scenarios/tiny.yaml"}, kCp}) {
    CAPTURE(scenario);
    const Json sim = simulate_json(scenario);
    std::vector<std::string> args = {"compare"};
    args.insert(args.end(), scenario.begin(), scenario.end());
    args.insert(args.end(), {"--variant", "base:", "--format", "json"});
    const CliResult r = run_trident(args);
    INFO(r.err);
    REQUIRE(r.code == 0);
    const Json variant = Json::parse(r.out).at("variants").at(0);
    size_t compared = 0;
    for (const auto& [key, value] : sim.items()) {
      if (value.is_object() || value.is_array()) continue;  // stages, explain, offload
      CAPTURE(key);
      REQUIRE(variant.contains(key));
      CHECK(variant.at(key) == value);
      ++compared;
    }
    CHECK(compared > 40);
  }
}

TEST_CASE("compare's table shows the context-parallel plan and its exposed CP time",
          "[report][compare][cli]") {
  const Json sim = simulate_json(kCp);
  REQUIRE(sim.at("context_parallel").get<int>() > 1);
  REQUIRE(sim.at("cp_comm_exposed_s").get<double>() > 0);
  std::vector<std::string> args = {"compare"};
  args.insert(args.end(), kCp.begin(), kCp.end());
  args.insert(args.end(), {"--variant", "base:"});
  const CliResult r = run_trident(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CAPTURE(r.out);
  const std::string cp = "cp=" + std::to_string(sim.at("context_parallel").get<int>());
  CHECK(r.out.find(cp) != std::string::npos);
  const size_t row = r.out.find("exposed CP comm");
  REQUIRE(row != std::string::npos);
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.4f s", sim.at("cp_comm_exposed_s").get<double>());
  CHECK(r.out.find(seconds, row) == r.out.find('\n', row) - std::string(seconds).size());
}

TEST_CASE("each plan of trident plan reports what simulate reports for its overrides",
          "[report][plan][cli]") {
  const CliResult r =
      run_trident({"plan", "scenarios/tiny.yaml", "--top", "2", "--format", "json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const Json plans = Json::parse(r.out).at("plans");
  REQUIRE(plans.size() == 2);
  for (const Json& plan : plans) {
    std::vector<std::string> args = {"scenarios/tiny.yaml"};
    for (const Json& o : plan.at("set")) args.insert(args.end(), {"--set", o.get<std::string>()});
    const Json sim = simulate_json(args);
    for (const auto& [key, value] : plan.items()) {
      if (key == "plan" || key == "set" || key == "step_lower_bound_s") continue;
      CAPTURE(plan.at("plan"), key);
      CHECK(value == sim.at(key));
    }
  }
}
