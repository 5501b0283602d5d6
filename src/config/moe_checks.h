// Checks of a plan's mixture-of-experts settings against Megatron-Core's rules: expert and
// expert-tensor parallelism, the token dispatchers (flex: DeepEP, HybridEP), capacity and
// padding.
#ifndef TRIDENT_CONFIG_MOE_CHECKS_H_
#define TRIDENT_CONFIG_MOE_CHECKS_H_

#include <vector>

#include "config/checks.h"
#include "config/model.h"
#include "config/plan.h"

namespace trident {

// Appends to *issues the problems of `plan`'s MoE settings on `model` (on a dense model only
// expert_model_parallel_size above 1 is one). Megatron-Core's expert-parallel rules
// (megatron/core/parallel_state.py initialize_model_parallel, megatron/training/arguments.py): EP x
// ETP divides the GPUs of a pipeline stage (t x cp x d, folded in the order tp-ep-dp); the experts
// split evenly over EP; tensor parallelism with experts needs sequence parallelism. trident models
// ETP = 1 or t, and expert groups that tile the tensor-parallel groups (EP x ETP a multiple or a
// divisor of t). Also the flex dispatcher's rules and padding to capacity.
void moe_plan_issues(const PlanSpec& plan, const ModelSpec& model, std::vector<SpecIssue>* issues);

}  // namespace trident

#endif  // TRIDENT_CONFIG_MOE_CHECKS_H_
