// Parameter counts and model FLOPs of transformers with mixtures of experts and multi-latent
// attention (pure). Counts follow Megatron-Core's modules (megatron/core/transformer/moe/
// experts.py, router.py, shared_experts.py; multi_latent_attention.py); FLOPs follow
// Megatron-LM's num_floating_point_operations (megatron/training/training.py).
#ifndef TRIDENT_WORKLOAD_MOE_MODEL_H_
#define TRIDENT_WORKLOAD_MOE_MODEL_H_

#include "config/model.h"

namespace trident {

// Returns the weights of one layer's attention block (Q, K, V and output projections; with
// multi-latent attention also the down/up projections and the two latent norms), without the
// layer's input norm. Biases only for GPT-style (non-gated) models.
double attention_params(const ModelSpec& m);
// Returns the weights of one routed expert: 3 h f_moe with SwiGLU, else 2 h f_moe.
double routed_expert_params(const ModelSpec& m);
// Returns the weights of the shared expert (0 without one).
double shared_expert_params(const ModelSpec& m);
// Returns the router's weights (h x num_experts).
double router_params(const ModelSpec& m);
// Returns the MLP weights of a MoE layer: router, every routed expert, the shared expert.
double moe_mlp_params(const ModelSpec& m);
// Returns the MLP weights one token uses in a MoE layer: router, top-k experts, shared expert.
double moe_active_mlp_params(const ModelSpec& m);
// Returns the number of MoE layers (0 for a dense model).
int moe_layer_count(const ModelSpec& m);
// Returns the weights of layer `l` (0-based; dense or MoE as the model's pattern says).
double layer_params_at(const ModelSpec& m, int l);
// Returns the parameters one token's forward pass uses: all but the routed experts it is not
// sent to (embeddings and output layer included). Equals model_params for a dense model.
double active_params(const ModelSpec& m);

// Returns Megatron-LM's model FLOPs of one step of `batch_size` sequences (forward and
// backward, no recomputation), as num_floating_point_operations computes them for a decoder
// without multi-token prediction: dense, routed and shared MLPs by layer count, MHA/GQA
// attention with the causal half of the score matrix, or MLA's projection and core terms, and
// the logits. The vocabulary is not padded (trident models the vocabulary as written).
double megatron_model_flops(const ModelSpec& m, double batch_size);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_MOE_MODEL_H_
