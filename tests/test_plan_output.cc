// The outputs of `trident plan` (src/cli/plan_output.h): --explain counts every rule under the
// field whose value broke it, then memory, the bound and the simulations, as the JSON counts
// them; the why line names the fields in which #1 and #2 differ and the part of the step that
// differs most, from the reported parts.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.h"

using namespace trident::testing;
using nlohmann::json;

namespace {

CliResult plan(std::vector<std::string> args, const std::string& format) {
  args.insert(args.begin(), "plan");
  args.insert(args.end(), {"--format", format, "--jobs", "2"});
  const CliResult r = run_trident(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return r;
}

// The value of KEY in a plan's "set" list ("" when absent).
std::string set_value(const json& plan, const std::string& key) {
  for (const json& o : plan.at("set")) {
    const std::string s = o.get<std::string>();
    if (s.compare(0, key.size() + 1, key + "=") == 0) return s.substr(key.size() + 1);
  }
  return "";
}

}  // namespace

TEST_CASE("trident plan --explain counts each rule under its field then memory bound and runs") {
  // t = 3 breaks a rule; Llama 3 8B on 8 A100 80GB does not fit at t = 1 without sharding.
  const std::vector<std::string> search = {
      "--cluster", "tiny-2node", "--model",        "llama3-8b",
      "--seq",     "2048",       "--global-batch", "16",
      "--top",     "3",          "--vary",         "plan.tensor_parallel=1,2,3"};
  const json j = json::parse(plan(search, "json").out);
  std::vector<std::string> args = search;
  args.push_back("--explain");
  const std::string table = plan(args, "table").out;
  const json& c = j.at("candidates");
  auto count_line = [&](const std::string& name, long long n) {
    // "    NAME<padding> N": the name, then the count right-aligned.
    const size_t at = table.find("    " + name + " ");
    REQUIRE(at != std::string::npos);
    const size_t end = table.find('\n', at);
    const std::string line = table.substr(at, end - at);
    CAPTURE(line);
    CHECK(std::stoll(line.substr(line.find_last_of(' ') + 1)) == n);
  };
  REQUIRE(c.at("pruned_by_rule").size() > 0);
  bool tensor_rule = false;
  for (const auto& [rule, n] : c.at("pruned_by_rule").items()) {
    CAPTURE(rule);
    // Named by a searched field (or the loader's checks, by their key).
    CHECK((rule.rfind("plan.", 0) == 0 || rule.rfind("checks: ", 0) == 0));
    if (rule == "plan.tensor_parallel: t divides the GPUs") tensor_rule = true;
    count_line(rule, n.get<long long>());
  }
  CHECK(tensor_rule);
  CHECK(c.at("pruned_by_memory").get<long long>() > 0);
  count_line("memory (peak + reserve > HBM)", c.at("pruned_by_memory").get<long long>());
  count_line("lower bound above the proven top", c.at("pruned_by_bound").get<long long>());
  count_line("simulated", c.at("simulated").get<long long>());
  CHECK(c.at("enumerated").get<long long>() ==
        c.at("pruned_by_memory").get<long long>() + c.at("fitting").get<long long>());
}

TEST_CASE("trident plan why line names the differing fields and the part that differs most") {
  // Everything pinned but the micro-batch size: #1 and #2 differ in it alone.
  const std::vector<std::string> pinned = {"scenarios/tiny.yaml",
                                           "--top",
                                           "2",
                                           "--vary",
                                           "plan.tensor_parallel=2",
                                           "--vary",
                                           "plan.pipeline_parallel=1",
                                           "--vary",
                                           "plan.recompute=none",
                                           "--vary",
                                           "plan.sequence_parallel=true",
                                           "--vary",
                                           "plan.data_parallel_sharding_strategy=optim",
                                           "--vary",
                                           "plan.overlap_grad_reduce=true"};
  const json one = json::parse(plan(pinned, "json").out);
  REQUIRE(one.at("plans").size() == 2);
  const std::string field = "plan.micro_batch_size";
  const std::string expected = "(micro_batch_size " + set_value(one["plans"][0], field) + " vs " +
                               set_value(one["plans"][1], field) + "):";
  CHECK(one.at("why").get<std::string>().find(expected) != std::string::npos);

  // A free search: every searched field that differs is named, no equal one is, and the
  // first part named is the one #1 saves most on.
  for (const std::vector<std::string>& search :
       {std::vector<std::string>{"scenarios/tiny.yaml", "--top", "2"},
        std::vector<std::string>{"--cluster", "tiny-2node", "--model", "llama3-8b", "--seq", "2048",
                                 "--global-batch", "16", "--top", "2"}}) {
    const json j = json::parse(plan(search, "json").out);
    REQUIRE(j.at("plans").size() == 2);
    const json &a = j["plans"][0], &b = j["plans"][1];
    const std::string why = j.at("why").get<std::string>();
    CAPTURE(why);
    for (const json& o : a.at("set")) {
      const std::string s = o.get<std::string>();
      const std::string key = s.substr(0, s.find('='));
      if (key == "plan.data_parallel" || key == "plan.num_microbatches" ||
          key == "plan.distributed_optimizer" || key == "plan.pipeline_layers" ||
          key == "plan.expert_tensor_parallel_size") {
        continue;
      }
      const std::string named = key.substr(5) + " " + set_value(a, key) + " vs ";
      CAPTURE(key);
      CHECK((why.find(named) != std::string::npos) == (set_value(a, key) != set_value(b, key)));
    }
    auto parts = [](const json& p) {
      const double step = p.at("step_time_s").get<double>();
      return std::vector<double>{step * p.at("compute_utilization").get<double>(),
                                 step * p.at("bubble_fraction").get<double>(),
                                 p.at("tp_comm_exposed_s").get<double>(),
                                 p.at("pp_comm_exposed_s").get<double>(),
                                 p.at("dp_comm_exposed_s").get<double>(),
                                 p.at("cp_comm_exposed_s").get<double>(),
                                 p.at("ep_comm_exposed_s").get<double>()};
    };
    const std::vector<std::string> names = {"compute",    "bubble",     "exposed TP", "exposed PP",
                                            "exposed DP", "exposed CP", "exposed EP"};
    const std::vector<double> pa = parts(a), pb = parts(b);
    size_t most = 0;
    for (size_t i = 1; i < pa.size(); ++i) {
      if (pb[i] - pa[i] > pb[most] - pa[most]) most = i;
    }
    CHECK(why.find("): " + names[most] + " −") != std::string::npos);
  }
}
