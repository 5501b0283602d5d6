// Multi-token prediction on SimGrid (workload/mtp): the depth's passes on the last pipeline
// stage lengthen a simulated 1F1B step by about what they add to that stage, which runs every
// micro-batch's forward and backward on the critical path. Each simulation runs in a child
// process.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config/scenario.h"
#include "config_support.h"
#include "sim_report.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

TEST_CASE("mtp: the depth on the last stage adds its passes to the simulated step",
          "[mtp][engine]") {
  const Scenario without = load_scenario(kTiny, {});
  const Scenario with = load_scenario(kTiny, {"model.mtp_num_layers=1"});
  const Workload w0 = build_workload(without), w1 = build_workload(with);
  const auto passes = [](const Workload& w) {
    const ChunkWork& ch = w.stages.back().chunks[0];
    return ch.forward.compute_s + ch.backward.compute_s;
  };
  const double added = with.plan.num_microbatches * (passes(w1) - passes(w0));
  REQUIRE(added > 0);
  const double step0 = simulated_step(without), step1 = simulated_step(with);
  INFO("step " << step0 << " -> " << step1 << " s, last stage's compute +" << added << " s");
  // At least the compute added to the critical path; little more: the depth's own TP
  // collectives (eh_proj's gathers, the layer's and the logits' reductions) on NVLink.
  CHECK(step1 - step0 >= 0.99 * added);
  CHECK(step1 - step0 <= 1.1 * added);
}
