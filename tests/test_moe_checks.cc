// Megatron-Core's expert-parallel rules as plan checks (config/checks.cc): each refused with a
// message naming the setting.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config_support.h"

using namespace trident;
using namespace trident::testing;

namespace {

// The tiny scenario (t=2 p=2 d=2) with 8 experts, sequence parallel, and `more`.
std::string moe_error(std::vector<std::string> more) {
  std::vector<std::string> sets = {"model.num_experts=8", "plan.sequence_parallel=true"};
  sets.insert(sets.end(), more.begin(), more.end());
  return load_error(repo("scenarios/tiny.yaml"), sets);
}

}  // namespace

TEST_CASE("expert-parallel plans are checked as Megatron-Core checks them", "[moe][checks]") {
  CHECK_THAT(moe_error({"plan.expert_model_parallel_size=4"}),
             Catch::Contains("expert_model_parallel_size 4 x expert_tensor_parallel_size 2 does "
                             "not divide tensor_parallel x context_parallel x data_parallel = 4"));
  CHECK_THAT(moe_error({"model.num_experts=3", "plan.expert_model_parallel_size=2"}),
             Catch::Contains("num_experts 3 is not divisible by expert_model_parallel_size 2"));
  CHECK_THAT(
      moe_error({"plan.expert_tensor_parallel_size=1"}),
      Catch::Contains("expert_tensor_parallel_size 1 differs from tensor_parallel 2: "
                      "trident models that with moe_token_dispatcher_type alltoall or flex only"));
  CHECK_THAT(moe_error({"plan.expert_tensor_parallel_size=4"}),
             Catch::Contains("expert_tensor_parallel_size 4 is neither 1 nor tensor_parallel 2"));
  CHECK_THAT(moe_error({"plan.sequence_parallel=false"}),
             Catch::Contains("needs sequence_parallel: true"));
  CHECK_THAT(moe_error({"model.moe_router_topk=9"}),
             Catch::Contains("moe_router_topk 9 exceeds num_experts 8"));
  CHECK_THAT(moe_error({"plan.moe_pad_expert_input_to_capacity=true"}),
             Catch::Contains("needs moe_expert_capacity_factor"));
  CHECK_THAT(load_error(repo("scenarios/tiny.yaml"), {"plan.expert_model_parallel_size=2"}),
             Catch::Contains("needs a model with experts"));
  CHECK_THAT(moe_error({"plan.moe_expert_load_imbalance=0.5"}),
             Catch::Contains("plan.moe_expert_load_imbalance"));
  // A valid plan loads, with the expert-data-parallel group d / EP.
  const Scenario ok = load_scenario(
      repo("scenarios/tiny.yaml"),
      {"model.num_experts=8", "plan.sequence_parallel=true", "plan.expert_model_parallel_size=2"});
  CHECK(ok.plan.expert_data_parallel() == 1);
  CHECK(ok.plan.expert_tensor_parallel == 2);
  // ETP = 1 (Megatron-Core's expert groups fold the TP ranks): EP x ETP divides t x d = 4.
  const std::vector<std::string> etp1 = {"model.num_experts=8", "plan.sequence_parallel=true",
                                         "plan.moe_token_dispatcher_type=alltoall",
                                         "plan.expert_tensor_parallel_size=1"};
  std::vector<std::string> ep4 = etp1, ep2 = etp1;
  ep4.push_back("plan.expert_model_parallel_size=4");
  ep2.push_back("plan.expert_model_parallel_size=2");
  CHECK(load_scenario(repo("scenarios/tiny.yaml"), ep4).plan.expert_data_parallel() == 1);
  CHECK(load_scenario(repo("scenarios/tiny.yaml"), ep2).plan.expert_data_parallel() == 2);
}
