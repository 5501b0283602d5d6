// Time to train and cost (--train-tokens, --gpu-hour-price; plan.train_tokens,
// plan.gpu_hour_price) in simulate's table, JSON and CSV, and in sweep and compare columns.
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"

using trident::testing::run_trident;

TEST_CASE("days of training, GPU-hours and cost in every format", "[train][cli]") {
  const auto r = run_trident({"simulate", "scenarios/tiny.yaml", "--train-tokens", "1B",
                              "--gpu-hour-price", "2.5", "--format", "json"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const double tokens_per_step = j["tokens_per_s"].get<double>() * j["step_time_s"].get<double>();
  const double steps = std::ceil(1e9 / tokens_per_step - 1e-9);
  const double seconds = steps * j["step_time_s"].get<double>();
  CHECK(j["train_tokens"].get<double>() == 1e9);
  CHECK(j["train_days"].get<double>() == Approx(seconds / 86400));
  CHECK(j["gpu_hours"].get<double>() == Approx(seconds / 3600 * j["gpus"].get<int>()));
  CHECK(j["cost"].get<double>() == Approx(2.5 * j["gpu_hours"].get<double>()));
  // The same from the plan setting.
  const auto set = nlohmann::json::parse(run_trident({"simulate", "scenarios/tiny.yaml", "--set",
                                                      "plan.train_tokens=1e9", "--format", "json"})
                                             .out);
  CHECK(set["train_days"] == j["train_days"]);
  CHECK(set["cost"].is_null());

  const auto table = run_trident(
      {"simulate", "scenarios/tiny.yaml", "--train-tokens", "1B", "--gpu-hour-price", "2.5"});
  CHECK_THAT(table.out, Catch::Contains("time to train"));
  CHECK_THAT(table.out, Catch::Contains("GPU-hours"));
  CHECK_THAT(table.out, Catch::Contains("cost"));
  const auto csv =
      run_trident({"simulate", "scenarios/tiny.yaml", "--train-tokens", "1B", "--format", "csv"});
  CHECK_THAT(csv.out, Catch::Contains(",train_tokens,train_days,gpu_hours,cost\n"));

  const auto none = nlohmann::json::parse(
      run_trident({"simulate", "scenarios/tiny.yaml", "--format", "json"}).out);
  CHECK(none["train_days"].is_null());
  CHECK_THAT(run_trident({"simulate", "scenarios/tiny.yaml", "--format", "csv"}).out,
             Catch::EndsWith(",,,,\n"));
}

TEST_CASE("time to train in sweep and compare columns", "[train][cli]") {
  const auto sweep =
      run_trident({"sweep", "scenarios/tiny.yaml", "--vary", "plan.num_microbatches=4,8",
                   "--train-tokens", "2B", "--gpu-hour-price", "3"});
  REQUIRE(sweep.code == 0);
  CHECK_THAT(sweep.out, Catch::Contains(",train_tokens,train_days,gpu_hours,cost,status\n"));
  CHECK_THAT(sweep.out, Catch::Contains(",2000000000,"));
  const auto compare =
      run_trident({"compare", "scenarios/tiny.yaml", "--variant", "m4:plan.num_microbatches=4",
                   "--variant", "m8:plan.num_microbatches=8", "--train-tokens", "2B"});
  REQUIRE(compare.code == 0);
  CHECK_THAT(compare.out, Catch::Contains("time to train"));
  const auto json = nlohmann::json::parse(
      run_trident({"compare", "scenarios/tiny.yaml", "--variant", "m4:plan.num_microbatches=4",
                   "--train-tokens", "2B", "--format", "json"})
          .out);
  CHECK(json["variants"][0]["train_days"].get<double>() > 0);
}

TEST_CASE("bad token counts and prices: exit 2", "[train][cli]") {
  const auto bad = run_trident({"simulate", "scenarios/tiny.yaml", "--train-tokens", "15X"});
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--train-tokens: expected a token count such as 15T"));
  const auto price = run_trident(
      {"simulate", "scenarios/tiny.yaml", "--train-tokens", "1T", "--gpu-hour-price=-1"});
  CHECK(price.code == 2);
  CHECK_THAT(price.err, Catch::Contains("plan.gpu_hour_price"));
}
