// Megatron-Core's selective recomputation by module (--recompute-granularity selective with
// --recompute-modules; TransformerConfig.recompute_modules, transformer_config.py): each listed
// module's saved activations are freed after its forward and the module's forward reruns in
// the backward pass before its gradients. Where each module sits: transformer_layer.py
// (core_attn, layernorm), multi_latent_attention.py (mla_up_proj), mlp.py (mlp), moe/experts.py
// (moe_act), moe/moe_layer.py (moe, shared_experts).
#ifndef TRIDENT_WORKLOAD_RECOMPUTE_MODULES_H_
#define TRIDENT_WORKLOAD_RECOMPUTE_MODULES_H_

#include <vector>

#include "config/model.h"
#include "config/plan.h"
#include "workload/layer_ops.h"

namespace trident {

// Returns whether `op` belongs to the attention core (the unfused products and softmax, the
// fused kernel, the context-parallel ring): what Korthikanti's selective recomputation and
// Megatron's core_attn rerun.
bool is_attention_core(const Op& op);

// Returns the ops of `forward` (one layer's forward kernels, a MoE layer's when `moe`) that
// plan.recompute_modules reruns before the layer's backward, in forward order: core_attn the
// attention core (is_attention_core); layernorm the pre-MLP norm of a MoE layer (the
// dense layer's norms are fused into Transformer Engine's LayerNormLinear, an IdentityOp that
// Megatron-Core does not checkpoint); mla_up_proj MLA's up-projections and RoPE; mlp a dense
// MLP from its norm to its TP reduction; moe a MoE MLP from its router (its TP all-gather under
// sequence parallelism) to its TP reduction, dispatch and combine included; moe_act the experts'
// activation; shared_experts the shared expert's three kernels. Empty unless recompute is
// selective.
std::vector<Op> module_recompute_ops(const std::vector<Op>& forward, const PlanSpec& plan,
                                     bool moe);

// Returns the activation bytes per micro-batch and TP rank that plan.recompute_modules frees in
// one layer (a MoE layer's when `moe`) beyond core_attn (which layer_activation_bytes applies):
// layernorm the MoE layer's 16-bit pre-MLP norm output; mla_up_proj the saved Q, K and V; mlp the
// dense MLP's (dense_mlp_activation_bytes); moe everything the MoE MLP keeps
// (moe_activation_delta_bytes + the dense MLP's share it replaces); otherwise moe_act the
// experts' activation output (the FC2 input) and shared_experts the shared expert's kept
// tensors. 0 unless recompute is selective.
double recompute_module_savings(const ModelSpec& model, const PlanSpec& plan, bool moe);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_RECOMPUTE_MODULES_H_
