// Optimizer CPU offload in a simulated step (engine/simulator.cc, kOptimizer): the GPU waits on
// the host's copies and CPU step as workload/optimizer_offload.h times them, the wait is
// reported apart from the bubble, and overlapping the copies shortens it. Simulations run in
// child processes.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "config/scenario.h"
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

Scenario llama8b(std::vector<std::string> sets) {
  sets.push_back("plan.use_precision_aware_optimizer=true");
  return load_scenario(source_path("scenarios/llama3-8b-dgx-h100.yaml"), sets);
}

json simulate(const Scenario& sc) {
  return json::parse(run_isolated([&]() {
    const Workload w = build_workload(sc);
    SimOptions opt;
    const Timeline tl = simulate_step(sc, w, build_programs(sc.plan), opt);
    return format_json(make_report(sc, w, tl, "fast"));
  }));
}

}  // namespace

TEST_CASE("offload simulation: the host's share lengthens the step, less when overlapped",
          "[engine][offload]") {
  const Scenario gpu_sc = llama8b({});
  const Scenario serial_sc = llama8b({"plan.optimizer_cpu_offload=true"});
  const Scenario piped_sc =
      llama8b({"plan.optimizer_cpu_offload=true", "plan.overlap_cpu_optimizer_d2h_h2d=true"});
  const json gpu = simulate(gpu_sc);
  const json serial = simulate(serial_sc);
  const json piped = simulate(piped_sc);
  const double step = gpu.at("step_time_s");
  CHECK(gpu.at("optimizer_offload_exposed_s") == 0);
  CHECK_FALSE(gpu.contains("optimizer_offload"));

  // The wait is what the engine ran: offload_times around the GPU's own (shorter) step.
  const Workload w = build_workload(serial_sc);
  const StageWork& st = w.stages[0];
  const OffloadTimes t = offload_times(st.offload, st.optimizer_s);
  const double wait = t.gpu_start + t.end - t.gpu_end;
  CHECK(serial.at("optimizer_offload_exposed_s").get<double>() == Approx(wait).epsilon(1e-9));
  CHECK(serial.at("stages")[0].at("offload_exposed_s").get<double>() == Approx(wait).epsilon(1e-9));
  // Nothing else changed: the step grows by the wait less the GPU step it no longer runs whole.
  const double gpu_step = build_workload(gpu_sc).stages[0].optimizer_s;
  CHECK(serial.at("step_time_s").get<double>() == Approx(step + t.end - gpu_step).epsilon(1e-9));
  CHECK(serial.at("bubble_fraction").get<double>() ==
        Approx(gpu.at("bubble_fraction").get<double>() * step /
               serial.at("step_time_s").get<double>())
            .margin(1e-6));
  CHECK(serial.at("optimizer_offload").at("d2h_bytes").get<double>() ==
        Approx(st.offload.d2h_bytes));

  // Overlapped copies hide behind the CPU step: shorter than serial, longer than no offload.
  CHECK(piped.at("step_time_s").get<double>() < serial.at("step_time_s").get<double>());
  CHECK(piped.at("step_time_s").get<double>() > step);
  CHECK(piped.at("optimizer_offload").at("overlap") == true);
  // The GPU's memory drops by its optimizer state.
  CHECK(serial.at("peak_memory_gib").get<double>() < gpu.at("peak_memory_gib").get<double>());
  CHECK(serial.at("stages")[0].at("optimizer_gib") == 0);
}
