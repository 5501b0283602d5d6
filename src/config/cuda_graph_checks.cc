#include "config/cuda_graph_checks.h"

#include <string>

namespace trident {
namespace {

void add(std::vector<SpecIssue>* issues, std::vector<std::string> keys, std::string message) {
  issues->push_back(SpecIssue{std::move(keys), std::move(message)});
}

}  // namespace

void cuda_graph_issues(const PlanSpec& p, const ModelSpec& m, std::vector<SpecIssue>* issues) {
  const bool moe = m.moe();
  const bool hybridep =
      p.moe_dispatcher == MoeDispatcher::kFlex && p.moe_flex_backend == MoeFlexBackend::kHybridEp;
  if (p.moe_expert_rank_capacity_factor > 0 && !(moe && hybridep)) {
    add(issues, {"plan.moe_expert_rank_capacity_factor", "plan.moe_flex_dispatcher_backend"},
        "moe_expert_rank_capacity_factor is HybridEP's receive budget: it needs a MoE model with "
        "moe_token_dispatcher_type flex and moe_flex_dispatcher_backend hybridep");
  }
  if (p.moe_paged_stash && !(moe && hybridep && p.moe_expert_rank_capacity_factor > 0)) {
    add(issues, {"plan.moe_paged_stash", "plan.moe_expert_rank_capacity_factor"},
        "moe_paged_stash needs HybridEP (flex dispatcher, hybridep backend) with "
        "moe_expert_rank_capacity_factor (Megatron-Core paged_stash.md)");
  }
  const unsigned scope = p.cuda_graph_scope;
  if (p.cuda_graph_impl == CudaGraphImpl::kNone) {
    if (scope != 0) {
      add(issues, {"plan.cuda_graph_scope", "plan.cuda_graph_impl"},
          "cuda_graph_scope needs cuda_graph_impl local or transformer_engine (it is none)");
    }
    return;
  }
  const bool padded = p.moe_capacity_factor > 0 && p.moe_pad_to_capacity;
  if ((scope & kGraphFullIteration) && scope != kGraphFullIteration) {
    add(issues, {"plan.cuda_graph_scope"},
        "full_iteration captures the whole step: it goes alone in cuda_graph_scope");
    return;
  }
  if (scope == kGraphFullIteration) {
    if (moe && p.moe_dispatch_syncs()) {
      add(issues, {"plan.cuda_graph_scope", "plan.moe_paged_stash"},
          "full_iteration with MoE layers needs a dispatch that never asks the host: "
          "moe_paged_stash with moe_expert_rank_capacity_factor (hybridep), or "
          "moe_pad_expert_input_to_capacity with a capacity factor (Megatron-Core "
          "cuda_graph.md)");
    }
    return;
  }
  if (scope == 0 && moe && !padded) {
    add(issues, {"plan.cuda_graph_scope"},
        "an empty cuda_graph_scope captures whole layers, which a dropless MoE layer cannot be "
        "(its shapes depend on the routing): name the parts, e.g. [attn, moe_router, "
        "moe_preprocess]");
  }
  if ((scope & kGraphMoe) && !padded) {
    add(issues, {"plan.cuda_graph_scope", "plan.moe_pad_expert_input_to_capacity"},
        "cuda_graph_scope moe needs drop-and-pad (moe_pad_expert_input_to_capacity with "
        "moe_expert_capacity_factor): a dropless MoE MLP's shapes depend on the routing");
  }
  if ((scope & kGraphMoePreprocess) && !(scope & (kGraphMoeRouter | kGraphMoe))) {
    add(issues, {"plan.cuda_graph_scope"},
        "cuda_graph_scope moe_preprocess needs moe_router (Megatron-Core captures the "
        "preprocess with the router)");
  }
  if ((scope & (kGraphMoe | kGraphMoeRouter | kGraphMoePreprocess)) && !moe) {
    add(issues, {"plan.cuda_graph_scope"},
        "cuda_graph_scope moe, moe_router and moe_preprocess need a MoE model "
        "(model.num_experts)");
  }
}

}  // namespace trident
