// End-to-end tests of `trident compare`: the intra- versus inter-node tensor-parallel comparison
// on the shipped scenario, and variants given on the command line.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_output.h"
#include "cli_runner.h"

using namespace trident::testing;
namespace fs = std::filesystem;
using Result = CliResult;

TEST_CASE("compare: TP across nodes is slower, and exposed TP communication explains it",
          "[compare][cli]") {
  const Result r = run_trident({"compare", "scenarios/tp-placement.yaml", "--tp-placement",
                                "intra,inter", "--format", "json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["variants"].size() == 2);
  const auto& intra = j["variants"][0];
  const auto& inter = j["variants"][1];
  CHECK(intra["name"] == "intra");
  CHECK(inter["overrides"][0] == "plan.placement=[data, tensor, pipeline]");
  const double slower = inter["step_time_s"].get<double>() - intra["step_time_s"].get<double>();
  CHECK(inter["step_time_ratio"].get<double>() > 1.2);  // clearly slower
  CHECK(inter["tp_comm_share"].get<double>() > 3 * intra["tp_comm_share"].get<double>());
  // The extra exposed TP time accounts for most of the extra step time.
  const double extra_tp =
      inter["tp_comm_exposed_s"].get<double>() - intra["tp_comm_exposed_s"].get<double>();
  CHECK(extra_tp > 0.8 * slower);
  CHECK(intra["step_time_ratio"].get<double>() == 1.0);

  const Result table =
      run_trident({"compare", "scenarios/tp-placement.yaml", "--tp-placement", "intra,inter"});
  REQUIRE(table.code == 0);
  CHECK(table.out.find("exposed TP comm") != std::string::npos);
  CHECK(table.out.find("vs first") != std::string::npos);
}

TEST_CASE("compare --variant prints one CSV row per variant", "[compare][cli]") {
  const Result r = run_trident({"compare", "scenarios/tiny.yaml", "--variant", "base:", "--variant",
                                "m16:plan.num_microbatches=16", "--format", "csv"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  REQUIRE(count_lines(r.out) == 3);
  CHECK(r.out.rfind("variant,overrides,step_time_s,", 0) == 0);
  const auto rows = rows_of(r.out);
  CHECK(get(rows[0], "variant") == "base");
  CHECK(get(rows[0], "step_time_ratio") == "1");
  CHECK(std::stod(get(rows[1], "step_time_ratio")) > 1);
  CHECK(get(rows[1], "status") == "ok");
}
