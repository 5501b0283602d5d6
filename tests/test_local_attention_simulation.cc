// Local attention in the engine and the plan bound (docs/attention.md): a pipeline whose stages
// hold window and full layers simulates the same at both fidelities, its stages' passes differ
// by their layers' attention, and `trident plan`'s step lower bound stays below the step.
#include <catch2/catch.hpp>
#include <string>

#include "config/checks.h"
#include "engine/simulator.h"
#include "layout/program.h"
#include "search/plan_bound.h"
#include "sim_report.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

// gpt-oss-20b cut to 8 layers on one DGX H100 node: p = 2, d = 4, EP 4, sequence 16384; the
// window on layers `pattern` (window_attn_skip_freq).
Scenario oss(const std::string& pattern) {
  return load_scenario_text(
      "cluster: dgx-h100\nmodel: gpt-oss-20b\nplan:\n  tensor_parallel: 1\n"
      "  pipeline_parallel: 2\n  data_parallel: 4\n  micro_batch_size: 1\n"
      "  global_batch_size: 16\n  expert_model_parallel_size: 4\n"
      "  distributed_optimizer: true\n  precision: bf16\n",
      "local-attention-test",
      {"cluster.nodes=1", "model.num_layers=8", "model.seq_length=16384",
       "model.window_attn_skip_freq=" + pattern});
}

}  // namespace

TEST_CASE("window and full layers: fast equals full fidelity, the bound holds",
          "[attention-window][simulation]") {
  // Stage 0 all window layers, stage 1 all full ones; then gpt-oss's alternation.
  for (const char* pattern : {"[1, 1, 1, 1, 0, 0, 0, 0]", "2"}) {
    CAPTURE(pattern);
    const Scenario sc = oss(pattern);
    REQUIRE(plan_issues(sc.plan, sc.model, sc.cluster).empty());
    const double fast = simulate_report(sc, Fidelity::kFast).step_time_s;
    const double full = simulate_report(sc, Fidelity::kFull).step_time_s;
    CHECK(fast == Approx(full).epsilon(0.01));
    const std::vector<StageProgram> programs = build_programs(sc.plan);
    const Workload w = build_workload(sc, programs);
    const double bound = step_lower_bound(sc, w, programs).total_s;
    CAPTURE(bound, fast);
    CHECK(bound > 0);
    CHECK(bound <= fast * (1 + 1e-9));
  }
  // The window stage is the lighter one: the full one's step is longer than alternating.
  CHECK(simulated_step(oss("[1, 1, 1, 1, 0, 0, 0, 0]")) > simulated_step(oss("2")));
}
