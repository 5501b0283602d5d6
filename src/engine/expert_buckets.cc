// Expert gradient buckets: with overlap_grad_reduce, Megatron-Core's DDP puts the expert
// parameters in buckets of their own (megatron/core/distributed/distributed_data_parallel.py,
// param_and_grad_buffer.py: a separate buffer for expert-parallel parameters) and reduces each
// over the expert-data-parallel group as soon as its gradients are complete, beside the
// backward, as the dense buckets reduce over the data-parallel group. With sharded gradients
// they fill from every micro-batch's backward and run one after another.
#include "engine/step_simulation.h"

namespace trident {

void StepSimulation::maybe_launch_expert_bucket(ActorState& a, bool flush) {
  const StageWork& st = w_.stages[a.pp];
  if (!async_experts_ || a.expert_bucket_params <= 0) return;
  if (!flush && a.expert_bucket_params < st.expert_grad_bucket_params) return;
  const double bytes = a.expert_bucket_params * st.expert_grad_bytes / st.expert_params_per_gpu;
  a.expert_bucket_params = 0;
  if (!sharded_expert_grads_) {
    a.pending_buckets.push_back(join(a, CollKind::kExpertData, dp_op_, bytes, /*async=*/true));
    return;
  }
  // Sharded gradients: every micro-batch's expert buckets reduce-scatter one after another, as
  // on one NCCL stream (Megatron-FSDP's reduce-scatter stream), so that buckets the network
  // cannot keep up with queue instead of sharing it all at once. A helper actor per bucket
  // waits for the previous one, then joins; `done` is released for the next bucket and for
  // the step's final wait.
  const sg4::SemaphorePtr previous = a.last_expert_bucket;
  const sg4::SemaphorePtr done = sg4::Semaphore::create(0);
  a.last_expert_bucket = done;
  a.pending_buckets.push_back(done);
  sg4::Actor::create("expert bucket", sg4::this_actor::get_host(),
                     [this, &a, previous, done, bytes]() {
                       if (previous) previous->acquire();
                       const double start = sg4::Engine::get_clock();
                       await(join(a, CollKind::kExpertData, dp_op_, bytes, /*async=*/false));
                       // Runs beside the compute: recorded for the trace, exposed only where the
                       // step waits.
                       if (Interval* iv = record(a, IntervalKind::kDpComm, start, -1)) {
                         iv->bucket = a.buckets;
                         iv->op = dp_op_;
                         iv->bytes = bytes;
                       }
                       a.buckets += 1;
                       done->release();
                       done->release();
                     });
}

}  // namespace trident
