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

// Megatron-Core TransformerConfig.__post_init__ (transformer_config.py), "A2A overlap checks":
// EP > 1, the alltoall or flex dispatcher, no full recomputation, at most one MTP layer, no
// shared-expert overlap, and with pipelining the interleaved schedule.
void ep_overlap_issues(const PlanSpec& p, const ModelSpec& m, std::vector<SpecIssue>* issues) {
  if (!p.overlap_moe_expert_parallel_comm) return;
  const std::string key = "plan.overlap_moe_expert_parallel_comm";
  if (!m.moe() || p.expert_parallel <= 1) {
    add(issues, {key, "plan.expert_model_parallel_size"},
        "overlap_moe_expert_parallel_comm needs a mixture of experts with "
        "expert_model_parallel_size above 1 (Megatron-Core: it is only supported with expert "
        "model parallelism)");
    return;
  }
  if (p.moe_dispatcher == MoeDispatcher::kAllGather) {
    add(issues, {key, "plan.moe_token_dispatcher_type"},
        "overlap_moe_expert_parallel_comm needs moe_token_dispatcher_type alltoall or flex "
        "(Megatron-Core refuses allgather)");
  }
  if (p.recompute == Recompute::kFull) {
    add(issues, {key, "plan.recompute"},
        "overlap_moe_expert_parallel_comm does not work with recompute full "
        "(Megatron-Core: disable full recomputation)");
  }
  if (p.moe_shared_expert_overlap) {
    add(issues, {key, "plan.moe_shared_expert_overlap"},
        "overlap_moe_expert_parallel_comm does not work with moe_shared_expert_overlap "
        "(Megatron-Core refuses both)");
  }
  if (m.mtp_num_layers > 1) {
    add(issues, {key, "model.mtp_num_layers"},
        "overlap_moe_expert_parallel_comm supports mtp_num_layers 1 at most (it is " +
            str(m.mtp_num_layers) + "; Megatron-Core refuses more)");
  }
  if (p.pipeline > 1 && p.schedule != ScheduleKind::kInterleaved1F1B) {
    add(issues, {key, "plan.schedule"},
        "overlap_moe_expert_parallel_comm with pipeline_parallel " + str(p.pipeline) +
            " needs the interleaved schedule (Megatron-Core: virtual_pipeline_model_parallel_"
            "size must be set when pipeline_model_parallel_size > 1)");
  }
  if (p.pipeline == 1 && p.schedule == ScheduleKind::kGpipe) {
    add(issues, {key, "plan.schedule"},
        "overlap_moe_expert_parallel_comm pairs forwards with backwards (combined 1F1B); "
        "schedule gpipe has no such pairs");
  }
  if (p.shards_params()) {
    add(issues, {key, "plan.data_parallel_sharding_strategy"},
        "overlap_moe_expert_parallel_comm with data_parallel_sharding_strategy "
        "optim_grads_params (per-layer weight gathers beside the combined passes) is not "
        "simulated; expected another sharding strategy");
  }
}

}  // namespace

void moe_plan_issues(const PlanSpec& p, const ModelSpec& m, std::vector<SpecIssue>* issues) {
  ep_overlap_issues(p, m, issues);
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
