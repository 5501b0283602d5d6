// A pipeline layout with an empty virtual stage in the step simulation (engine/).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config_support.h"
#include "sim_report.h"

namespace trident {

TEST_CASE("pipeline layout: an empty virtual stage passes activations on, fast = full",
          "[engine][layout]") {
  // Stage 1's first chunk holds no layer (Megatron allows empty stages in a layout): it still
  // receives and forwards each micro-batch, and both fidelities agree.
  const Scenario sc = load_scenario(
      testing::repo("scenarios/tiny.yaml"),
      {"plan.pipeline_model_parallel_layout=Et*2||t*3|t*3L", "plan.schedule=interleaved-1f1b"});
  REQUIRE(sc.plan.pipeline_layers == std::vector<int>{2, 0, 3, 3});
  const Report fast = testing::simulate_report(sc, Fidelity::kFast);
  const Report full = testing::simulate_report(sc, Fidelity::kFull);
  CHECK(fast.step_time_s == Approx(full.step_time_s).epsilon(0.01));
  CHECK(fast.pp_comm_exposed_s == Approx(full.pp_comm_exposed_s).epsilon(0.01));
  // The empty chunk still costs its stage two transfers per micro-batch: the same plan with
  // its layers moved into the neighbour chunk is not the same step.
  const Scenario dense = load_scenario(testing::repo("scenarios/tiny.yaml"),
                                       {"plan.pipeline_layers=[2, 1, 2, 3]",
                                        "plan.schedule=interleaved-1f1b", "plan.virtual_stages=2"});
  CHECK(testing::simulate_report(dense, Fidelity::kFast).step_time_s != fast.step_time_s);
}

}  // namespace trident
