// trident goodput: its keys, determinism (same seed, same bytes), options and the SVG plot.
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"

using trident::testing::read_file;
using trident::testing::run_trident;

TEST_CASE("goodput prints the whole run's keys", "[goodput][cli]") {
  const auto r = run_trident({"goodput", "scenarios/tiny.yaml", "--train-tokens", "20B",
                              "--samples", "50", "--format", "json"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key :
       {"time_to_train_s", "effective_training_fraction", "interruptions_expected", "mtbf_s",
        "checkpoint_save_s", "checkpoint_interval_s", "time_to_train_p10_s", "time_to_train_p50_s",
        "time_to_train_p90_s", "step_time_s"}) {
    INFO(key);
    CHECK(j[key].is_number());
  }
  const auto& b = j["goodput_breakdown"];
  const double sum = b["productive_s"].get<double>() + b["straggler_s"].get<double>() +
                     b["checkpoint_s"].get<double>() + b["lost_work_s"].get<double>() +
                     b["restart_s"].get<double>();
  CHECK(sum == Approx(j["time_to_train_s"].get<double>()).epsilon(1e-9));
  // No cluster.stragglers: the straggler-free step is the same simulated step.
  CHECK(b["straggler_s"].get<double>() == 0);
  CHECK(j["step_time_s"] == j["straggler_free_step_time_s"]);
  // The steps to train 20B tokens at the simulated step are the productive time.
  CHECK(b["productive_s"].get<double>() ==
        Approx(j["steps"].get<double>() * j["step_time_s"].get<double>()).epsilon(1e-9));
  CHECK(j["checkpoint_interval_s"] == j["optimal_interval_s"]);
  CHECK(j["time_to_train_s"].get<double>() ==
        Approx(j["time_to_train_expected_s"].get<double>()).epsilon(0.02));
}

TEST_CASE("goodput: a slow GPU's cost is its steps' slowdown over the whole run",
          "[goodput][cli]") {
  const auto r =
      run_trident({"goodput", "scenarios/tiny.yaml", "--train-tokens", "20B", "--samples", "20",
                   "--format", "json", "--set", "cluster.stragglers.gpu_clock_fraction=0.8"});
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const double step = j["step_time_s"].get<double>();
  const double free = j["straggler_free_step_time_s"].get<double>();
  CHECK(step > free);
  // The step as configured against the step with cluster.stragglers cleared, every step.
  const auto& b = j["goodput_breakdown"];
  CHECK(b["straggler_s"].get<double>() ==
        Approx(j["steps"].get<double>() * (step - free)).epsilon(1e-9));
  CHECK(b["productive_s"].get<double>() == Approx(j["steps"].get<double>() * free).epsilon(1e-9));
}

TEST_CASE("goodput: same seed, same bytes; another seed, other draws", "[goodput][cli]") {
  // GPUs failing every 20 hours: a few interruptions a run, so the draws show.
  const std::vector<std::string> base = {"goodput",        "scenarios/tiny.yaml",
                                         "--train-tokens", "20B",
                                         "--samples",      "30",
                                         "--format",       "json",
                                         "--set",          "cluster.reliability.gpu_mtbf=20 h"};
  auto with_seed = [&](const char* seed) {
    std::vector<std::string> a = base;
    a.push_back("--seed");
    a.push_back(seed);
    return run_trident(a);
  };
  const auto a = with_seed("5"), b = with_seed("5"), c = with_seed("6");
  REQUIRE(a.code == 0);
  CHECK(a.out == b.out);
  CHECK(nlohmann::json::parse(a.out)["interruptions_expected"].get<double>() > 1);
  CHECK(nlohmann::json::parse(a.out)["time_to_train_p50_s"] !=
        nlohmann::json::parse(c.out)["time_to_train_p50_s"]);
}

TEST_CASE("goodput: an interval, sync saves, days, CSV and the plot", "[goodput][cli]") {
  const auto fixed =
      nlohmann::json::parse(run_trident({"goodput", "scenarios/tiny.yaml", "--train-tokens", "20B",
                                         "--samples", "20", "--checkpoint-interval", "15 min",
                                         "--checkpoint-save", "sync", "--format", "json"})
                                .out);
  // Taken at the step it falls in: a whole number of steps, within half a step of 900 s.
  const double step = fixed["step_time_s"].get<double>();
  const double interval = fixed["checkpoint_interval_s"].get<double>();
  CHECK(std::abs(interval - 900) <= step / 2);
  CHECK(interval / step == Approx(std::round(interval / step)).epsilon(1e-9));
  CHECK(fixed["checkpoint_mode"] == "sync");
  const auto days =
      nlohmann::json::parse(run_trident({"goodput", "scenarios/tiny.yaml", "--train-days", "3",
                                         "--samples", "20", "--format", "json"})
                                .out);
  CHECK(days["time_to_train_s"].get<double>() == 3 * 86400);
  CHECK(days["tokens_trained"].get<double>() > 0);
  const auto csv = run_trident({"goodput", "scenarios/tiny.yaml", "--train-tokens", "20B",
                                "--samples", "10", "--format", "csv"});
  CHECK_THAT(csv.out, Catch::Contains("time_to_train_s"));
  CHECK_THAT(csv.out, Catch::Contains("lost_work_s"));
  const std::string svg = "/tmp/trident_goodput_test.svg";
  std::remove(svg.c_str());
  const auto plot = run_trident(
      {"goodput", "scenarios/tiny.yaml", "--train-tokens", "20B", "--samples", "10", "--svg", svg});
  REQUIRE(plot.code == 0);
  CHECK_THAT(plot.out, Catch::Contains("time to train"));
  CHECK_THAT(read_file(svg), Catch::Contains("optimum"));
  std::remove(svg.c_str());
}

TEST_CASE("goodput refuses bad options with exit 2", "[goodput][cli]") {
  CHECK(run_trident({"goodput", "scenarios/tiny.yaml"}).code == 2);
  CHECK(run_trident({"goodput", "scenarios/tiny.yaml", "--train-tokens", "1B", "--train-days", "2"})
            .code == 2);
  CHECK(run_trident({"goodput", "scenarios/tiny.yaml", "--train-tokens", "1B",
                     "--checkpoint-interval", "5 GB"})
            .code == 2);
  const auto bad = run_trident({"goodput", "scenarios/tiny.yaml", "--train-tokens", "1B", "--set",
                                "cluster.reliability.gpu_mtbf=-3 h"});
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("gpu_mtbf"));
}

TEST_CASE("goodput reproduces Llama 3 405B's 54 days on 16,384 H100", "[goodput][cli][llama3]") {
  const auto r = run_trident({"goodput", "scenarios/llama3-405b-16k-pretrain-h100.yaml",
                              "--train-days", "54", "--samples", "100", "--format", "json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  // Dubey et al. 2024, Table 5: 466 interruptions (47 planned, 419 unexpected) in 54 days, and
  // "higher than 90 % effective training time".
  CHECK(j["interruptions_expected"].get<double>() == Approx(466).epsilon(0.15));
  CHECK(j["effective_training_fraction"].get<double>() > 0.90);
  CHECK(j["mtbf_s"].get<double>() == Approx(54 * 86400.0 / 466).epsilon(0.15));
}

TEST_CASE("plan --objective time-to-train ranks by the expected time to train",
          "[goodput][cli][plan]") {
  const auto r = run_trident({"plan", "scenarios/tiny.yaml", "--objective", "time-to-train",
                              "--train-tokens", "20B", "--top", "3", "--format", "json", "--set",
                              "cluster.reliability.gpu_mtbf=20 h"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& plans = j["plans"];
  REQUIRE(plans.size() == 3);
  for (size_t i = 0; i + 1 < plans.size(); ++i) {
    CHECK(plans[i]["time_to_train_s"].get<double>() <=
          plans[i + 1]["time_to_train_s"].get<double>());
  }
  // Each plan's time to train is what goodput's closed form gives for it.
  std::vector<std::string> args = {"goodput",        "scenarios/tiny.yaml",
                                   "--train-tokens", "20B",
                                   "--samples",      "1",
                                   "--format",       "json",
                                   "--set",          "cluster.reliability.gpu_mtbf=20 h"};
  for (const auto& set : plans[0]["set"]) {
    args.push_back("--set");
    args.push_back(set.get<std::string>());
  }
  const auto g = nlohmann::json::parse(run_trident(args).out);
  CHECK(g["time_to_train_expected_s"].get<double>() ==
        Approx(plans[0]["time_to_train_s"].get<double>()).epsilon(1e-9));
  CHECK(run_trident({"plan", "scenarios/tiny.yaml", "--objective", "time-to-train"}).code == 2);
  CHECK(run_trident({"plan", "scenarios/tiny.yaml", "--objective", "cost"}).code == 2);
}
