// The kernels and expert-parallel collectives of a mixture-of-experts MLP and of multi-latent
// attention, on one tensor-parallel rank (Megatron-Core megatron/core/transformer/moe/:
// router.py TopKRouter, token_dispatcher.py MoEAlltoAllTokenDispatcher and
// MoEAllGatherTokenDispatcher, experts.py GroupedMLP / TEGroupedMLP, shared_experts.py;
// multi_latent_attention.py MLASelfAttention).
//
// A MoE MLP, after the layer's pre-MLP norm (and the sequence-parallel all-gather, so each TP
// rank sees the T = b s tokens of its micro-batch): the router GEMM (T x E x h) and its top-k
// softmax; the permutation of the T k routed copies; the dispatch (alltoall: each TP rank
// sends 1/t of the copies over the EP group, then, with ETP = t > 1, the TP group all-gathers
// them; allgather: every token is all-gathered over the EP group); the grouped expert GEMMs,
// E / EP experts of m = EP ETP T k / (t E) x load tokens each, their weights split over
// ETP = expert_tensor_parallel_size (1 or t); the
// combine (the reverse collectives); the unpermutation; and the shared expert on all T tokens,
// which Megatron-Core runs during the dispatch and combine with --moe-shared-expert-overlap.
// The block's output is then reduced over TP by the layer's own collective, as a dense MLP's.
#ifndef TRIDENT_WORKLOAD_MOE_OPS_H_
#define TRIDENT_WORKLOAD_MOE_OPS_H_

#include <vector>

#include "config/model.h"
#include "config/plan.h"
#include "workload/layer_ops.h"

namespace trident {

// Returns the tokens of the busiest EP rank's experts over the balanced mean: the busiest
// expert carries moe_expert_load_imbalance x its share (capped by the capacity factor; every
// expert runs at the capacity when padded) and sits on that rank beside E/EP - 1 experts that
// share the remaining tokens evenly: (L + (n - 1)(E - L) / (E - 1)) / n with n = E / EP.
// 1 for a dense model.
double moe_expert_load(const ModelSpec& model, const PlanSpec& plan);
// Returns the busiest expert's tokens over the mean (the imbalance, capped by the capacity).
double moe_busiest_expert_load(const PlanSpec& plan);
// Returns the mean tokens one expert processes per micro-batch: EP ETP / t x b s / cp x
// topk / E (EP b s topk / E with ETP = t and cp = 1).
double moe_tokens_per_expert(const ModelSpec& model, const PlanSpec& plan);

// Returns what a MoE layer keeps for backward beyond the dense layer_activation_bytes, per
// micro-batch and TP rank (negative parts: the dense MLP's 16 s b h / t of Korthikanti et al.
// that a MoE MLP does not keep), with T = b s / cp: the routed copies at the experts' input,
// ETP T k L h / t, their fc1 and activation outputs, T k L (g + 1) f_moe / t, the shared expert's,
// T (g + 1) f_s / t (g = 2 with SwiGLU, else 1; 16-bit elements), and the fp32 routing
// probabilities, 4 T k. Full recomputation keeps only the layer input: 0.
double moe_activation_delta_bytes(const ModelSpec& model, const PlanSpec& plan);
// Returns the dispatch and combine buffers of one MoE layer in flight on one TP rank: the
// permuted copies sent and the copies received, 2 T k L h / t 16-bit elements (0 for a dense
// model or EP = 1).
double moe_dispatch_buffer_bytes(const ModelSpec& model, const PlanSpec& plan);

// Returns the SMs an expert dispatch or combine kernel holds while it runs: Megatron-Core's
// moe_deepep_num_sms (20) for DeepEP and moe_hybridep_num_sms (16) for HybridEP
// (transformer_config.py defaults); 0 for NCCL's all-to-all and the allgather dispatcher,
// whose channel count trident does not model.
int moe_all_to_all_sms(const PlanSpec& plan);

// Returns how much slower compute runs beside an expert all-to-all in flight (the combined
// 1F1B, engine/combined_passes.cc): all SMs over those the all-to-all leaves, 1 without any.
double moe_all_to_all_compute_stretch(const PlanSpec& plan, int sms);

// Appends the forward / backward kernels and collectives of a MoE MLP (see above).
void add_moe_mlp_forward(const LayerDims& d, std::vector<Op>* ops);
void add_moe_mlp_backward(const LayerDims& d, std::vector<Op>* ops);
// Appends multi-latent attention's projections before the attention kernel (forward), and
// their gradients after it (backward) but for the shared down-projections' weight gradient.
void add_mla_forward(const LayerDims& d, std::vector<Op>* ops);
void add_mla_backward(const LayerDims& d, std::vector<Op>* ops);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_MOE_OPS_H_
