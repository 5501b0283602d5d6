// End-to-end tests of `trident plan`: the found plan fits and is at least as fast as the
// scenario's published plan, outputs are the same whatever --jobs, every ranked plan runs
// under `trident simulate --set` with the step it was ranked by, shards cover the space, and
// bad command lines exit 2 with the key named. Issue 30: --fix errors blame --fix, an absurd
// space is refused before it is built, "no plan fits" names its rule, and an interrupted
// search prints what finished.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.h"

using namespace trident::testing;
using nlohmann::json;

namespace {

json plan_json(const std::vector<std::string>& args) {
  std::vector<std::string> all = {"plan"};
  all.insert(all.end(), args.begin(), args.end());
  all.insert(all.end(), {"--format", "json"});
  const CliResult r = run_trident(all);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return json::parse(r.out);
}

}  // namespace

TEST_CASE("trident plan finds a plan that fits and is at least as fast as the published one") {
  // The shipped scenarios whose published plans are cheap to search around: tiny (8 A100)
  // and Llama 3 8B on one DGX H100.
  for (const std::string scenario : {"scenarios/tiny.yaml", "scenarios/llama3-8b-dgx-h100.yaml"}) {
    CAPTURE(scenario);
    const json j = plan_json({scenario, "--top", "3"});
    REQUIRE(j["plans"].size() == 3);
    const json& best = j["plans"][0];
    CHECK(best["memory_margin_gib"].get<double>() >= 0);
    CHECK(best["step_time_s"].get<double>() <= j["given_plan"]["step_time_s"].get<double>());
    double previous = 0;
    for (const json& p : j["plans"]) {
      CHECK(p["step_time_s"].get<double>() >= previous);
      CHECK(p["step_lower_bound_s"].get<double>() <= p["step_time_s"].get<double>());
      previous = p["step_time_s"].get<double>();
    }
    const json& c = j["candidates"];
    CHECK(c["enumerated"].get<long>() ==
          c["pruned_by_memory"].get<long>() + c["fitting"].get<long>());
    CHECK(c["fitting"].get<long>() ==
          c["pruned_by_bound"].get<long>() + c["simulated"].get<long>());
  }
}

TEST_CASE("trident plan ranks each plan by the step simulate gives for its --set line") {
  const json j = plan_json({"scenarios/tiny.yaml", "--top", "2", "--fix", "plan.schedule=1f1b"});
  for (const json& p : j["plans"]) {
    std::vector<std::string> args = {"simulate", "scenarios/tiny.yaml", "--format", "json"};
    for (const json& o : p["set"]) {
      args.push_back("--set");
      args.push_back(o.get<std::string>());
    }
    const CliResult r = run_trident(args);
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(json::parse(r.out)["step_time_s"].get<double>() == p["step_time_s"].get<double>());
    CHECK(p["plan"].get<std::string>().find("1f1b") != std::string::npos);
  }
}

TEST_CASE("trident plan output does not depend on --jobs") {
  const std::vector<std::string> args = {"plan",     "--cluster",      "tiny-2node", "--model",
                                         "gpt-1.7b", "--global-batch", "32",         "--top",
                                         "4",        "--explain"};
  std::vector<std::string> one = args, two = args;
  one.insert(one.end(), {"--jobs", "1"});
  two.insert(two.end(), {"--jobs", "3"});
  const CliResult a = run_trident(one), b = run_trident(two);
  REQUIRE(a.code == 0);
  CHECK(a.out == b.out);
  CHECK(a.out.find("pruned by rule") != std::string::npos);
}

TEST_CASE("trident plan shards hold the whole space's best plan between them") {
  const std::vector<std::string> base = {"--cluster",      "tiny-2node", "--model", "gpt-1.7b",
                                         "--global-batch", "32",         "--top",   "1"};
  const json whole = plan_json(base);
  double best_of_shards = 1e30;
  long enumerated = 0;
  for (const std::string shard : {"0/2", "1/2"}) {
    std::vector<std::string> args = base;
    args.insert(args.end(), {"--shard", shard});
    const json j = plan_json(args);
    enumerated +=
        j["candidates"]["fitting"].get<long>() + j["candidates"]["pruned_by_memory"].get<long>();
    best_of_shards = std::min(best_of_shards, j["plans"][0]["step_time_s"].get<double>());
  }
  CHECK(enumerated == whole["candidates"]["enumerated"].get<long>());
  CHECK(best_of_shards == whole["plans"][0]["step_time_s"].get<double>());
}

TEST_CASE("trident plan --max-simulations stops early and says what it did not prove") {
  const std::vector<std::string> base = {"--cluster",      "tiny-2node", "--model", "gpt-1.7b",
                                         "--global-batch", "32",         "--top",   "2"};
  const json whole = plan_json(base);
  REQUIRE(whole["proven"].get<bool>());
  const long needed = whole["candidates"]["simulated"].get<long>();
  REQUIRE(needed > 2);
  // A budget below what the proof needs: the first candidates in bound order, unproven.
  std::vector<std::string> args = base;
  args.insert(args.end(), {"--max-simulations", "2"});
  const json cut = plan_json(args);
  CHECK_FALSE(cut["proven"].get<bool>());
  CHECK(cut["candidates"]["simulated"].get<long>() == 2);
  CHECK(cut["candidates"]["pruned_by_bound"].get<long>() == 0);
  CHECK(cut["candidates"]["not_simulated"].get<long>() ==
        cut["candidates"]["fitting"].get<long>() - 2);
  REQUIRE(cut["plans"].size() == 2);
  // The best of two is no faster than the proven best; unproven because the least bound
  // left unsimulated could still beat the second of the two.
  const double best = whole["plans"][0]["step_time_s"].get<double>();
  CHECK(cut["plans"][0]["step_time_s"].get<double>() >= best);
  CHECK(cut["unsimulated_lower_bound_s"].get<double>() <=
        cut["plans"][1]["step_time_s"].get<double>());
  CHECK(cut["unsimulated_lower_bound_s"].get<double>() >=
        cut["plans"][0]["step_lower_bound_s"].get<double>());
  // The table says so too, and a budget the proof fits in changes nothing.
  std::vector<std::string> table = {"plan"};
  table.insert(table.end(), args.begin(), args.end());
  const CliResult t = run_trident(table);
  CHECK(t.out.find("not proven: --max-simulations 2 reached") != std::string::npos);
  args.back() = std::to_string(needed);
  CHECK(plan_json(args) == whole);
}

TEST_CASE("trident plan refuses bad command lines with exit status 2") {
  auto refused = [](const std::vector<std::string>& args, const std::string& needle) {
    std::vector<std::string> all = {"plan"};
    all.insert(all.end(), args.begin(), args.end());
    const CliResult r = run_trident(all);
    CAPTURE(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(needle) != std::string::npos);
  };
  refused({"scenarios/tiny.yaml", "--fix", "plan.tensor=2"}, "plan.tensor");
  // Each limit blames the option that gave it (issue 30: --fix was blamed on --vary).
  refused({"scenarios/tiny.yaml", "--fix", "plan.foo=3"}, "--fix: plan.foo: is not a searched");
  refused({"scenarios/tiny.yaml", "--fix", "plan.schedule=zigzag"}, "--fix: plan.schedule");
  refused({"scenarios/tiny.yaml", "--vary", "plan.foo=3"}, "--vary plan.foo=3");
  refused({"scenarios/tiny.yaml", "--fix", "plan.distributed_optimizer=maybe"},
          "--fix: plan.distributed_optimizer");
  refused({"scenarios/tiny.yaml", "--vary", "plan.schedule=zigzag"}, "zigzag");
  refused({"--cluster", "tiny-2node", "--model", "gpt-1.7b"}, "--global-batch");
  refused({"--cluster", "tiny-2node", "--model", "gpt-1.7b", "--global-batch", "8", "--gpus", "4"},
          "--allow-partial");
  refused({"--cluster", "no-such-cluster", "--model", "gpt-1.7b", "--global-batch", "8"},
          "no-such-cluster");
  refused({"scenarios/tiny.yaml", "--max-simulations", "0"}, "--max-simulations");
  refused({"scenarios/tiny.yaml", "--max-simulations", "5", "--shard", "0/2"}, "--shard");
}

TEST_CASE("trident plan refuses an absurd space before building it, naming the limit") {
  // Issue 30: 720-GPU islands and 5,040 layers took minutes and GiBs before saying nothing fits.
  const CliResult absurd =
      run_trident({"plan", "--cluster", "gb200-nvl72", "--model", "llama3-8b", "--nodes", "180",
                   "--seq", "4096", "--global-batch", "1440", "--set",
                   "cluster.nvlink.island_size=720", "--set", "model.num_layers=5040"});
  CAPTURE(absurd.err);
  CHECK(absurd.code == 2);
  CHECK(absurd.out.empty());
  CHECK(absurd.err.find("--max-work") != std::string::npos);
  CHECK(absurd.err.find("x 5040 layers") != std::string::npos);
  CHECK(absurd.err.find("raise --max-work") != std::string::npos);
  const CliResult many = run_trident({"plan", "scenarios/tiny.yaml", "--max-candidates", "5"});
  CHECK(many.code == 2);
  CHECK(many.err.find("more than 5 candidates") != std::string::npos);
  CHECK(many.err.find("raise --max-candidates") != std::string::npos);
  // 0 lifts a limit.
  CHECK(run_trident({"plan", "scenarios/tiny.yaml", "--max-candidates", "0", "--max-work", "0",
                     "--top", "1"})
            .code == 0);
}

TEST_CASE("trident plan says which rule binds when no plan fits, without --explain") {
  const CliResult memory = run_trident({"plan", "--cluster", "tiny-2node", "--model", "llama3-405b",
                                        "--global-batch", "8", "--seq", "4096"});
  CAPTURE(memory.err);
  CHECK(memory.code == 0);
  CHECK(memory.out.find("(no plan fits: memory: none of ") != std::string::npos);
  CHECK(memory.out.find("GiB)") != std::string::npos);
  CHECK(memory.out.find(" lacks ") != std::string::npos);
  const CliResult json = run_trident({"plan", "--cluster", "tiny-2node", "--model", "llama3-405b",
                                      "--global-batch", "8", "--seq", "4096", "--format", "json"});
  CHECK(json.err.find("no plan fits: memory:") != std::string::npos);
  const CliResult rules =
      run_trident({"plan", "scenarios/tiny.yaml", "--fix", "plan.tensor_parallel=3"});
  CAPTURE(rules.out);
  CHECK(rules.code == 0);
  CHECK(rules.out.find("(no plan fits: no candidate passes the rules; \"plan.tensor_parallel: "
                       "t divides the GPUs\" pruned most (") != std::string::npos);
}

TEST_CASE("trident plan ended by SIGTERM while simulating prints the candidates finished") {
  // A search of minutes (--top 1000 simulates most of the space, one at a time).
  const std::string dir = std::filesystem::temp_directory_path().string();
  const std::string out = dir + "/trident_plan_term_" + std::to_string(::getpid()) + ".out";
  const std::string cmd = "cd " + shell_quote(TRIDENT_SOURCE_DIR) + " && (" +
                          shell_quote(TRIDENT_BINARY) +
                          " plan --cluster dgx-h100 --model llama3-8b --nodes 1 --seq 4096 "
                          "--global-batch 64 --jobs 1 --top 1000 >" +
                          shell_quote(out) +
                          " 2>/dev/null & pid=$!; sleep 4; kill -TERM $pid; wait $pid; "
                          "exit $?)";
  const int status = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 128 + SIGTERM);
  const std::string text = read_file(out);
  CAPTURE(text);
  CHECK(text.find("not proven: interrupted (signal 15) after ") != std::string::npos);
  CHECK(text.find("      1  t=") != std::string::npos);  // at least one finished candidate
  std::filesystem::remove(out);
}
