#include "config/moe_checks.h"

#include <string>
#include <utility>

namespace trident {
namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

void add(std::vector<SpecIssue>* issues, std::vector<std::string> keys, std::string message) {
  issues->push_back(SpecIssue{std::move(keys), std::move(message)});
}

// Megatron-Core's MoEFlexTokenDispatcher (token_dispatcher.py) and TransformerConfig checks:
// a TP x EP group of more than one rank, no padding to capacity, no shared-expert overlap.
void flex_dispatcher_issues(const PlanSpec& p, const ModelSpec& m, std::vector<SpecIssue>* issues) {
  (void)m;
  if (p.moe_dispatcher != MoeDispatcher::kFlex) return;
  if (p.expert_parallel * p.expert_tensor() <= 1) {
    add(issues, {"plan.moe_token_dispatcher_type", "plan.expert_model_parallel_size"},
        "moe_token_dispatcher_type flex needs expert_model_parallel_size x "
        "expert_tensor_parallel_size above 1 (Megatron-Core: the flex dispatcher requires "
        "TPxEP > 1)");
  }
  if (p.moe_pad_to_capacity) {
    add(issues, {"plan.moe_token_dispatcher_type", "plan.moe_pad_expert_input_to_capacity"},
        "moe_token_dispatcher_type flex does not support moe_pad_expert_input_to_capacity "
        "(Megatron-Core refuses it)");
  }
  if (p.moe_shared_expert_overlap) {
    add(issues, {"plan.moe_token_dispatcher_type", "plan.moe_shared_expert_overlap"},
        "moe_shared_expert_overlap works with moe_token_dispatcher_type alltoall only "
        "(Megatron-Core refuses it with flex)");
  }
}

}  // namespace

void moe_plan_issues(const PlanSpec& p, const ModelSpec& m, std::vector<SpecIssue>* issues) {
  if (!m.moe()) {
    if (p.expert_parallel > 1) {
      add(issues, {"plan.expert_model_parallel_size"},
          "expert_model_parallel_size " + str(p.expert_parallel) +
              " needs a model with experts (model.num_experts is not set)");
    }
    return;
  }
  // Megatron-Core transformer_config.py: "Bias in Moe is only supported when ETP==1".
  if (m.expert_biases() && p.expert_tensor() != 1) {
    add(issues, {"model.add_bias_linear", "plan.expert_tensor_parallel_size"},
        "add_bias_linear with experts needs expert_tensor_parallel_size 1 (it is " +
            str(p.expert_tensor()) + "; Megatron-Core supports expert biases only then)");
  }
  if (m.num_experts % p.expert_parallel != 0) {
    add(issues, {"plan.expert_model_parallel_size", "model.num_experts"},
        "num_experts " + str(m.num_experts) + " is not divisible by expert_model_parallel_size " +
            str(p.expert_parallel) + " (each EP rank holds the same number of experts)");
  }
  const int etp = p.expert_tensor(), block = p.expert_parallel * etp;
  const int stage = p.tensor * p.context * p.data;
  if (etp != 1 && etp != p.tensor) {
    add(issues, {"plan.expert_tensor_parallel_size"},
        "expert_tensor_parallel_size " + str(etp) + " is neither 1 nor tensor_parallel " +
            str(p.tensor) + " (trident models experts unsplit or split like the dense layers)");
  } else if (stage % block != 0) {
    add(issues, {"plan.expert_model_parallel_size", "plan.expert_tensor_parallel_size"},
        "expert_model_parallel_size " + str(p.expert_parallel) + " x expert_tensor_parallel_size " +
            str(etp) + " does not divide tensor_parallel x context_parallel x data_parallel = " +
            str(stage) + " (the expert groups fold into the GPUs of a pipeline stage)");
  } else if (block % p.tensor != 0 && p.tensor % block != 0) {
    add(issues, {"plan.expert_model_parallel_size", "plan.tensor_parallel"},
        "expert_model_parallel_size " + str(p.expert_parallel) + " x expert_tensor_parallel_size " +
            str(etp) + " = " + str(block) + " is neither a multiple nor a divisor of " +
            "tensor_parallel " + str(p.tensor) +
            " (not modelled: expert groups must tile the "
            "tensor-parallel groups)");
  }
  if (etp != p.tensor && p.moe_dispatcher == MoeDispatcher::kAllGather) {
    add(issues, {"plan.expert_tensor_parallel_size", "plan.moe_token_dispatcher_type"},
        "expert_tensor_parallel_size " + str(etp) + " differs from tensor_parallel " +
            str(p.tensor) +
            ": trident models that with moe_token_dispatcher_type alltoall or flex only");
  }
  flex_dispatcher_issues(p, m, issues);
  if (p.tensor > 1 && !p.sequence_parallel) {
    add(issues, {"plan.sequence_parallel", "plan.tensor_parallel"},
        "a mixture of experts with tensor_parallel " + str(p.tensor) +
            " needs sequence_parallel: true (Megatron-Core requires it)");
  }
  if (p.moe_pad_to_capacity && p.moe_capacity_factor <= 0) {
    add(issues, {"plan.moe_pad_expert_input_to_capacity"},
        "moe_pad_expert_input_to_capacity needs moe_expert_capacity_factor (padding is to the "
        "capacity)");
  }
}

}  // namespace trident
