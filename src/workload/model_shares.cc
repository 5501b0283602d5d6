#include "workload/model_shares.h"

#include <numeric>

#include "workload/moe_model.h"
#include "workload/mtp.h"
#include "workload/stage_work.h"

namespace trident {

ModelShares model_shares(const Scenario& sc, const LayerDims& dims) {
  const ModelSpec& model = sc.model;
  const PlanSpec& plan = sc.plan;
  const GpuArchitecture arch = sc.cluster.gpu.architecture;
  ModelShares ms;
  // Megatron's data-parallel group with context parallelism (d * cp) reduces the gradients and
  // shards the distributed optimizer (parallel_state.get_data_parallel_group(
  // with_context_parallel=True)).
  ms.t = plan.tensor;
  ms.h = model.hidden_size;
  ms.d = plan.data_context();
  ms.p = plan.pipeline;
  ms.v = plan.virtual_stages;
  const double ep = plan.expert_parallel;
  // A MoE layer's GPU holds the non-expert weights split over t, and E / EP experts, each
  // split over ETP (expert_tensor_parallel_size).
  ms.moe_expert_params =
      model.moe() ? model.num_experts / ep * routed_expert_params(model) / plan.expert_tensor() : 0;
  ms.moe_layer_params =
      model.moe() ? (attention_params(model) + router_params(model) + shared_expert_params(model) +
                     (model.rms_norm ? 2 * ms.h : 4 * ms.h)) /
                            ms.t +
                        ms.moe_expert_params
                  : 0;
  ms.layers = virtual_stage_layers(model, plan);
  ms.per_layer_params = layer_params(model) / ms.t;
  ms.vocab_params = double(model.vocab_size) * ms.h / ms.t;
  ms.pos_params = model.learned_position_embeddings ? double(model.seq_length) * ms.h : 0;
  ms.final_norm = model.rms_norm ? ms.h : 2 * ms.h;
  // The output layer reuses the embedding matrix; on another stage it holds a copy.
  ms.output_copy = model.untie_embeddings_and_output_weights || ms.p > 1;
  // With EP = 1 and ETP = t the expert-data-parallel group is the data-parallel group: the
  // experts' gradients travel with the rest.
  const bool experts_apart = plan.expert_parallel > 1 || plan.expert_tensor() != plan.tensor;
  ms.apart_params = experts_apart ? ms.moe_expert_params : 0;
  ms.fp8 = plan.precision == Precision::kFp8;
  ms.fp4 = plan.precision == Precision::kFp4;
  // Under fp8 the weights stay 16-bit (Megatron's parameters) and Transformer Engine adds FP8
  // copies, cast once per step (Megatron passes is_first_microbatch, so later micro-batches
  // reuse them): timed with the optimizer step.
  ms.fp8_weight_bytes = ms.fp8 ? fp8_weight_bytes_per_param(plan.fp8_recipe, arch) : 0;
  ms.fp8_weight_cast = ms.fp8 ? fp8_cast_bytes_per_element(plan.fp8_recipe, arch) : 0;
  // FP8 primary weights (fp8_param_gather) keep no 16-bit copy; the distributed optimizer
  // gathers one FP8 layout with its scales.
  const bool fp8_only = ms.fp8 && plan.fp8_param_gather;
  ms.weight_bytes = fp8_only ? 0.0 : ms.fp8 || ms.fp4 ? 2.0 : precision_bytes(plan.precision);
  ms.gather_bytes = fp8_only ? fp8_gather_bytes_per_param(plan.fp8_recipe) : ms.weight_bytes;
  ms.tokens = double(plan.micro_batch_size) * dims.s;  // per rank: seq / cp
  ms.gather_bwd = plan.shards_params() && ms.d > 1;
  ms.gather_fwd = ms.gather_bwd || (plan.overlap_param_gather && ms.d > 1);
  // Megatron-FSDP keeps a MoE layer's routed experts in parameter groups of their own, sharded
  // over the expert-data-parallel group (megatron_fsdp/param_and_grad_buffer.py: groups keyed
  // by FSDP unit and is_expert_param, expert buffers on the expt_dp group); torchtitan's
  // apply_fsdp shards `moe.experts` over its efsdp mesh likewise. Both are gathered with their
  // layer, before its forward and again before its backward. Under overlap_param_gather the
  // distributed optimizer's expert buckets are gathered behind the forward likewise.
  ms.edp = plan.expert_data_parallel();
  const bool experts_gathered = ms.edp > 1 && ms.apart_params > 0;
  ms.gather_experts_bwd = plan.shards_params() && experts_gathered;
  ms.gather_experts_fwd =
      ms.gather_experts_bwd ||
      (plan.overlap_param_gather && plan.distributed_optimizer && ms.d > 1 && experts_gathered);

  // Multi-token prediction (mtp.h): its depths run on virtual stage mtp_vs, each with its own
  // weights per GPU (norms and eh_proj / t, and a layer of the last layer's kind).
  ms.mtp_vs = mtp_virtual_stage(model, plan);
  ms.mtp_moe = mtp_layer_is_moe(model);
  ms.mtp_head_params = (3 * ms.final_norm + 2 * ms.h * ms.h) / ms.t;
  ms.mtp_depth = ms.mtp_head_params + (ms.mtp_moe ? ms.moe_layer_params : ms.per_layer_params);
  ms.mtp_apart = ms.mtp_moe ? ms.apart_params : 0;
  ms.first_layer.assign(ms.p * ms.v + 1, 0);
  std::partial_sum(ms.layers.begin(), ms.layers.end(), ms.first_layer.begin() + 1);
  return ms;
}

}  // namespace trident
