// Expert gradient buckets: with overlap_grad_reduce, Megatron-Core's DDP puts the expert
// parameters in buckets of their own (megatron/core/distributed/distributed_data_parallel.py,
// param_and_grad_buffer.py: a separate buffer for expert-parallel parameters) and reduces each
// over the expert-data-parallel group as soon as its gradients are complete, beside the
// backward, as the dense buckets reduce over the data-parallel group.
#include "engine/step_simulation.h"

namespace trident {

void StepSimulation::maybe_launch_expert_bucket(ActorState& a, bool flush) {
  const StageWork& st = w_.stages[a.pp];
  if (!async_experts_ || a.expert_bucket_params <= 0) return;
  if (!flush && a.expert_bucket_params < st.expert_grad_bucket_params) return;
  const double bytes = a.expert_bucket_params * st.expert_grad_bytes / st.expert_params_per_gpu;
  a.expert_bucket_params = 0;
  a.pending_buckets.push_back(join(a, CollKind::kExpertData, dp_op_, bytes, /*async=*/true));
}

}  // namespace trident
