// The per-stage breakdown of the report (table and JSON `stages`): every stage, and its time
// split into compute, exposed TP/PP/DP communication and bubble adds up to the step.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "core/isolated_run.h"
#include "engine/simulator.h"
#include "report/metrics.h"
#include "report/writers.h"
#include "schedule/program.h"
#include "test_support.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;
using nlohmann::json;

namespace {

// Simulates `sc` in a child process; returns its JSON report and its table.
std::pair<json, std::string> report_of(const Scenario& sc) {
  const std::string both = run_isolated([&]() {
    const Workload w = build_workload(sc);
    const Timeline tl = simulate_step(sc, w, build_programs(sc.plan), SimOptions{});
    const Report r = make_report(sc, w, tl, "fast");
    return format_json(r) + '\x1e' + format_table(r);
  });
  const size_t cut = both.find('\x1e');
  return {json::parse(both.substr(0, cut)), both.substr(cut + 1)};
}

}  // namespace

TEST_CASE("every stage's time adds up to the step, in JSON and table", "[report][stages]") {
  const int p = 4;
  Scenario sc = scenario(a100_cluster(2), gpt_model(8, 1024, 16, 512, 32000),
                         plan(2, p, 2, 1, 8, ScheduleKind::k1F1B));
  const auto [j, table] = report_of(sc);
  const double step = j.at("step_time_s");
  REQUIRE(j.at("stages").size() == static_cast<size_t>(p));
  for (int s = 0; s < p; ++s) {
    const json& st = j.at("stages")[s];
    INFO("stage " << s);
    CHECK(st.at("stage") == s);
    CHECK(st.at("first_layer") == 2 * s);
    CHECK(st.at("num_layers") == 2);
    CHECK(st.at("compute_s").get<double>() > 0);
    CHECK(st.at("tp_comm_exposed_s").get<double>() > 0);
    CHECK(st.at("pp_comm_exposed_s").get<double>() > 0);
    CHECK(st.at("dp_comm_exposed_s").get<double>() > 0);
    CHECK(st.at("bubble_s").get<double>() > 0);
    const double sum = st.at("compute_s").get<double>() + st.at("tp_comm_exposed_s").get<double>() +
                       st.at("pp_comm_exposed_s").get<double>() +
                       st.at("dp_comm_exposed_s").get<double>() + st.at("bubble_s").get<double>();
    CHECK(sum == Approx(step).epsilon(1e-9));
    const double parts = st.at("weights_gib").get<double>() + st.at("gradients_gib").get<double>() +
                         st.at("optimizer_gib").get<double>() +
                         st.at("activations_gib").get<double>();
    CHECK(st.at("memory_gib").get<double>() == Approx(parts).epsilon(1e-12));
    // The table has the stage's row: index, layers, then the same figures.
    CHECK(std::regex_search(table, std::regex("\\n +" + std::to_string(s) + " +2 +[0-9.]+ ")));
  }
  for (const char* column : {"compute s", "TP s", "PP s", "DP s", "bubble s", "mem GiB"}) {
    CHECK(table.find(column) != std::string::npos);
  }
}

TEST_CASE("with free communication every 1F1B stage idles (p-1)/(m+p-1) of the step",
          "[report][stages]") {
  const int p = 4, m = 8;
  Scenario sc = scenario(free_comm_cluster(1), gpt_model(2 * p, 1024, 16, 256, 0),
                         plan(1, p, 1, 1, m, ScheduleKind::k1F1B));
  const auto [j, table] = report_of(sc);
  const double step = j.at("step_time_s");
  for (const json& st : j.at("stages")) {
    CHECK(st.at("bubble_s").get<double>() / step == Approx(double(p - 1) / (m + p - 1)));
  }
}
