// The report of a simulated step (report/metrics): its bubble is the time each GPU measurably
// waited, its stage memory follows from the model's parameter count, and rounding never makes
// a time or fraction negative or -0.0. Simulations run in child processes.
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "core/isolated_run.h"
#include "engine/simulator.h"
#include "layout/program.h"
#include "report/metrics.h"
#include "report/writers.h"
#include "test_support.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;
using nlohmann::json;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

struct Simulated {
  json report;        // format_json of the report
  std::string table;  // format_table of the report
  // What the engine measured for each actor, which make_report does not read:
  // {stage, gpus, pp_wait_s, end_s}.
  json actors;
};

// Simulates `sc` in a child process.
Simulated simulate(const Scenario& sc, Fidelity fidelity = Fidelity::kFast) {
  const std::string all = run_isolated([&]() {
    const Workload w = build_workload(sc);
    SimOptions opt;
    opt.fidelity = fidelity;
    const Timeline tl = simulate_step(sc, w, build_programs(sc.plan), opt);
    const Report r = make_report(sc, w, tl, fidelity_name(fidelity));
    json actors = json::array();
    for (const ActorTimeline& a : tl.actors) {
      actors.push_back(
          {{"stage", a.stage}, {"gpus", a.gpus}, {"pp_wait_s", a.pp_wait_s}, {"end_s", a.end_s}});
    }
    return format_json(r) + '\x1e' + format_table(r) + '\x1e' + actors.dump();
  });
  const size_t a = all.find('\x1e'), b = all.find('\x1e', a + 1);
  REQUIRE(b != std::string::npos);
  return {json::parse(all.substr(0, a)), all.substr(a + 1, b - a - 1),
          json::parse(all.substr(b + 1))};
}

// Per stage (and, at index p, over all GPUs), the mean time a GPU waited: on pipeline
// neighbours inside its step, plus after it finished until the slowest GPU did.
std::vector<double> measured_wait(const Simulated& s, int p) {
  const double step = s.report.at("step_time_s");
  std::vector<double> wait(p + 1, 0), gpus(p + 1, 0);
  for (const json& a : s.actors) {
    const int stage = a.at("stage");
    const double g = a.at("gpus").get<int>();
    const double w = a.at("pp_wait_s").get<double>() + (step - a.at("end_s").get<double>());
    for (int i : {stage, p}) {
      wait[i] += g * w;
      gpus[i] += g;
    }
  }
  for (int i = 0; i <= p; ++i) wait[i] /= gpus[i];
  return wait;
}

}  // namespace

TEST_CASE("the bubble is the time GPUs measurably waited on pipeline neighbours or the step's end",
          "[report][bubble]") {
  // make_report takes the bubble as what is left of the step after compute and exposed
  // communication; the engine measures the waits apart. Both agree when every moment of a
  // GPU's step is accounted for once.
  struct Case {
    const char* name;
    int t, p, d, m;
    ScheduleKind schedule;
    int v;
    Fidelity fidelity;
  };
  for (const Case& c :
       {Case{"1F1B", 2, 4, 2, 8, ScheduleKind::k1F1B, 1, Fidelity::kFast},
        Case{"GPipe", 2, 4, 1, 4, ScheduleKind::kGpipe, 1, Fidelity::kFast},
        Case{"interleaved", 1, 4, 2, 8, ScheduleKind::kInterleaved1F1B, 2, Fidelity::kFast},
        Case{"full fidelity", 2, 2, 2, 4, ScheduleKind::k1F1B, 1, Fidelity::kFull},
        Case{"overlapped DP", 2, 2, 4, 4, ScheduleKind::k1F1B, 1, Fidelity::kFast}}) {
    INFO(c.name);
    Scenario sc =
        scenario(a100_cluster((c.t * c.p * c.d + 7) / 8), gpt_model(8, 1024, 16, 512, 32000),
                 plan(c.t, c.p, c.d, 1, c.m, c.schedule));
    sc.plan.virtual_stages = c.v;
    sc.plan.overlap_grad_reduce = std::string(c.name) == "overlapped DP";
    const Simulated s = simulate(sc, c.fidelity);
    const double step = s.report.at("step_time_s");
    const std::vector<double> wait = measured_wait(s, c.p);
    REQUIRE(s.report.at("stages").size() == static_cast<size_t>(c.p));
    for (int i = 0; i < c.p; ++i) {
      INFO("stage " << i);
      const double bubble = s.report.at("stages")[i].at("bubble_s");
      CHECK(bubble > 0);
      CHECK(bubble == Approx(wait[i]).margin(1e-9 * step));
    }
    CHECK(s.report.at("bubble_fraction").get<double>() == Approx(wait[c.p] / step).margin(1e-9));
  }
}

TEST_CASE("with free communication every 1F1B stage idles (p-1)/(m+p-1) of the step",
          "[report][bubble]") {
  const int p = 4, m = 8;
  Scenario sc = scenario(free_comm_cluster(1), gpt_model(2 * p, 1024, 16, 256, 0),
                         plan(1, p, 1, 1, m, ScheduleKind::k1F1B));
  const Simulated s = simulate(sc);
  const double step = s.report.at("step_time_s");
  for (const json& st : s.report.at("stages")) {
    CHECK(st.at("bubble_s").get<double>() / step == Approx(double(p - 1) / (m + p - 1)));
  }
}

TEST_CASE("stage memory holds 18 bytes per parameter: 16-bit weights, fp32 gradients, Adam",
          "[report][memory]") {
  // Summed over stages and tensor ranks, the weights are the model's parameters (counted by
  // the published formula, checked in test_library) plus the output layer's copy of the
  // embedding on the last stage (p > 1); TP replicates only biases and norms (< 0.5 % here).
  const int t = 2, p = 4;
  const long vocab = 32000;
  const int hidden = 1024;
  Scenario sc = scenario(a100_cluster(2), gpt_model(8, hidden, 16, 512, vocab),
                         plan(t, p, 2, 1, 8, ScheduleKind::k1F1B));
  const Simulated s = simulate(sc);
  const double params = s.report.at("parameters").get<double>() + double(vocab) * hidden;
  double weights = 0, states = 0;
  for (const json& st : s.report.at("stages")) {
    CHECK(st.at("memory_gib").get<double>() > st.at("activations_gib").get<double>());
    weights += t * st.at("weights_gib").get<double>() * kGiB;
    states += t * kGiB *
              (st.at("weights_gib").get<double>() + st.at("gradients_gib").get<double>() +
               st.at("optimizer_gib").get<double>());
  }
  CHECK(weights == Approx(2 * params).epsilon(0.005));
  CHECK(states == Approx(18 * params).epsilon(0.005));
}

TEST_CASE("a plan without pipeline reports a bubble of exactly +0, in JSON and table",
          "[report][bubble]") {
  // p = 1: no GPU waits, and the bubble is step - compute - exposed communication, which
  // rounding used to leave at -2.9e-17 (printed "bubble -0.0 %").
  for (int d : {1, 2, 8}) {
    INFO("d=" << d);
    Scenario sc = scenario(a100_cluster(1), gpt_model(4, 1024, 16, 512, 32000),
                           plan(8 / d, 1, d, 1, 4, ScheduleKind::k1F1B));
    const Simulated s = simulate(sc);
    const double fraction = s.report.at("bubble_fraction");
    CHECK(fraction == 0);
    CHECK_FALSE(std::signbit(fraction));
    const double stage_bubble = s.report.at("stages")[0].at("bubble_s");
    CHECK(stage_bubble == 0);
    CHECK_FALSE(std::signbit(stage_bubble));
    // Serialised as 0, not -0.0 or a rounding residue such as -2.9e-17.
    const std::string dumped = s.report.dump();
    CHECK(std::regex_search(dumped, std::regex("\"bubble_fraction\":0(\\.0)?[,}]")));
    CHECK(dumped.find("-0.0") == std::string::npos);
    CHECK(std::regex_search(s.table, std::regex("bubble +0\\.0 %")));
    CHECK(s.table.find("-0.0") == std::string::npos);
    for (const char* key : {"tp_comm_exposed_s", "pp_comm_exposed_s", "dp_comm_exposed_s"}) {
      INFO(key);
      CHECK(s.report.at(key).get<double>() >= 0);
      CHECK_FALSE(std::signbit(s.report.at(key).get<double>()));
    }
  }
}

TEST_CASE("the stage table lists every stage with its layers and time columns",
          "[report][stages]") {
  const int p = 4;
  Scenario sc = scenario(a100_cluster(2), gpt_model(8, 1024, 16, 512, 32000),
                         plan(2, p, 2, 1, 8, ScheduleKind::k1F1B));
  const Simulated s = simulate(sc);
  REQUIRE(s.report.at("stages").size() == static_cast<size_t>(p));
  for (int i = 0; i < p; ++i) {
    const json& st = s.report.at("stages")[i];
    INFO("stage " << i);
    CHECK(st.at("stage") == i);
    CHECK(st.at("first_layer") == 2 * i);
    CHECK(st.at("num_layers") == 2);
    for (const char* key :
         {"compute_s", "tp_comm_exposed_s", "pp_comm_exposed_s", "dp_comm_exposed_s", "bubble_s"}) {
      INFO(key);
      CHECK(st.at(key).get<double>() > 0);
    }
    // The table has the stage's row: index, layers, then the figures.
    CHECK(std::regex_search(s.table, std::regex("\\n +" + std::to_string(i) + " +2 +[0-9.]+ ")));
  }
  for (const char* column : {"compute s", "TP s", "PP s", "DP s", "bubble s", "mem GiB"}) {
    CHECK(s.table.find(column) != std::string::npos);
  }
}
