// The report of a MoE step (report/metrics, report/writers): exposed expert-parallel time per
// step and stage, active parameters, Megatron's MFU, tokens per expert, dispatch buffers.
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
#include "workload/moe_model.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

std::string simulate_json(const Scenario& sc) {
  return run_isolated([&]() {
    const Workload w = build_workload(sc);
    const Timeline tl = simulate_step(sc, w, build_programs(sc.plan), SimOptions());
    return format_json(make_report(sc, w, tl, "fast"));
  });
}

}  // namespace

TEST_CASE("a MoE step reports its expert-parallel time, active parameters and Megatron MFU",
          "[report][moe]") {
  // The tiny scenario as a SwiGLU MoE, EP 2 across its two nodes' data-parallel pair.
  const Scenario sc = load_scenario(
      source_path("scenarios/tiny.yaml"),
      {"model.num_experts=8", "model.moe_router_topk=2", "model.moe_ffn_hidden_size=1024",
       "model.swiglu=true", "model.ffn_hidden_size=2816", "plan.sequence_parallel=true",
       "plan.expert_model_parallel_size=2", "plan.moe_token_dispatcher_type=alltoall",
       "plan.moe_expert_load_imbalance=1.5"});
  const nlohmann::json j = nlohmann::json::parse(simulate_json(sc));
  CHECK(j["ep_comm_exposed_s"].get<double>() > 0);
  CHECK(j["active_params"].get<double>() == active_params(sc.model));
  CHECK(j["active_params"].get<double>() < j["parameters"].get<double>());
  // Megatron's FLOPs of the global batch over step x GPUs x the bf16 peak.
  const double peak = sc.cluster.peak(Precision::kBf16);
  CHECK(j["mfu_active"].get<double>() ==
        Approx(megatron_model_flops(sc.model, sc.plan.global_batch_size) /
               (j["step_time_s"].get<double>() * 8 * peak))
            .epsilon(1e-12));
  CHECK(j["tokens_per_expert_mean"].get<double>() == 2 * 1024 * 2 / 8.0);
  CHECK(j["tokens_per_expert_max"].get<double>() == 1.5 * 512);
  double stage_ep = 0;
  for (const auto& s : j["stages"]) {
    stage_ep += s["ep_comm_exposed_s"].get<double>();
    CHECK(s["dispatch_buffers_gib"].get<double>() > 0);
  }
  CHECK(stage_ep / 2 == Approx(j["ep_comm_exposed_s"].get<double>()).epsilon(1e-9));
  // A dense model reports none of it.
  const nlohmann::json dense =
      nlohmann::json::parse(simulate_json(load_scenario(source_path("scenarios/tiny.yaml"), {})));
  CHECK(dense["ep_comm_exposed_s"].get<double>() == 0);
  CHECK(dense["active_params"].get<double>() == dense["parameters"].get<double>());
  CHECK(dense["tokens_per_expert_max"].get<double>() == 0);
}
