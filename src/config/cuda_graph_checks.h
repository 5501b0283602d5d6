// Checks of the CUDA graph and sync-free dispatch settings (plan.cuda_graph_impl,
// cuda_graph_scope, moe_expert_rank_capacity_factor, moe_paged_stash) against what
// Megatron-Core accepts (megatron/core/transformer/transformer_config.py, cuda_graph_config.py,
// docs/user-guide/features/cuda_graph.md and paged_stash.md).
#ifndef TRIDENT_CONFIG_CUDA_GRAPH_CHECKS_H_
#define TRIDENT_CONFIG_CUDA_GRAPH_CHECKS_H_

#include <vector>

#include "config/checks.h"

namespace trident {

// Appends the problems of `plan`'s CUDA graph and sync-free dispatch settings on `model`.
void cuda_graph_issues(const PlanSpec& plan, const ModelSpec& model,
                       std::vector<SpecIssue>* issues);

}  // namespace trident

#endif  // TRIDENT_CONFIG_CUDA_GRAPH_CHECKS_H_
