// The flex dispatcher's and group-limited routing's rules as checks (config/checks.cc), as
// Megatron-Core states them: each refused with a message naming the setting.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config_support.h"

using namespace trident;
using namespace trident::testing;

namespace {

// The tiny scenario (t=2 p=2 d=2) with 8 experts over EP 2, sequence parallel, and `more`.
std::vector<std::string> flex_sets(std::vector<std::string> more) {
  std::vector<std::string> sets = {"model.num_experts=8", "plan.sequence_parallel=true",
                                   "plan.expert_model_parallel_size=2",
                                   "plan.moe_token_dispatcher_type=flex"};
  sets.insert(sets.end(), more.begin(), more.end());
  return sets;
}

std::string flex_error(std::vector<std::string> more) {
  return load_error(repo("scenarios/tiny.yaml"), flex_sets(more));
}

// Loads the tiny flex scenario with `more`; true when no check refuses it.
bool flex_loads(std::vector<std::string> more) {
  const Scenario sc = load_scenario(repo("scenarios/tiny.yaml"), flex_sets(more));
  return sc.plan.moe_dispatcher == MoeDispatcher::kFlex;
}

}  // namespace

TEST_CASE("the flex dispatcher is checked as Megatron-Core checks it", "[moe][flex][checks]") {
  CHECK(flex_loads({}));
  CHECK(flex_loads({"plan.expert_tensor_parallel_size=1", "plan.expert_model_parallel_size=4"}));
  CHECK_THAT(flex_error({"plan.moe_expert_capacity_factor=1",
                         "plan.moe_pad_expert_input_to_capacity=true"}),
             Catch::Contains("flex does not support moe_pad_expert_input_to_capacity"));
  CHECK_THAT(flex_error({"model.moe_shared_expert_intermediate_size=1024",
                         "plan.moe_shared_expert_overlap=true"}),
             Catch::Contains("moe_shared_expert_overlap works with moe_token_dispatcher_type "
                             "alltoall only"));
  CHECK_THAT(flex_error({"plan.expert_model_parallel_size=1", "plan.tensor_parallel=1",
                         "plan.sequence_parallel=false", "plan.data_parallel=4"}),
             Catch::Contains("needs expert_model_parallel_size x expert_tensor_parallel_size "
                             "above 1"));
}

TEST_CASE("group-limited routing is checked", "[moe][flex][checks]") {
  CHECK(flex_loads({"model.moe_router_num_groups=4", "model.moe_router_group_topk=2"}));
  CHECK_THAT(flex_error({"model.moe_router_num_groups=4"}),
             Catch::Contains("needs both moe_router_num_groups and moe_router_group_topk"));
  CHECK_THAT(flex_error({"model.moe_router_num_groups=3", "model.moe_router_group_topk=1"}),
             Catch::Contains("num_experts 8 is not divisible by moe_router_num_groups 3"));
  CHECK_THAT(flex_error({"model.moe_router_num_groups=4", "model.moe_router_group_topk=5"}),
             Catch::Contains("moe_router_group_topk 5 exceeds moe_router_num_groups 4"));
  CHECK_THAT(flex_error({"model.moe_router_num_groups=8", "model.moe_router_group_topk=1",
                         "model.moe_router_topk=2"}),
             Catch::Contains("moe_router_topk 2 exceeds the 1 experts"));
}
