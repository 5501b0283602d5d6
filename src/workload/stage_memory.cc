#include "workload/stage_memory.h"

#include <algorithm>

#include "workload/moe_model.h"

namespace trident {

double master_param_bytes(const PlanSpec& p) {
  // Megatron-Core's precision-aware optimizer passes store_param_remainders (default True,
  // M core/optimizer/optimizer_config.py:192, core/optimizer/__init__.py:576-588) with an fp32
  // master to TE's FusedAdam only when there is no FP8 or it is delayed scaling
  // (use_precision_aware_optimizer_no_fp8_or_ds_fp8); FusedAdam then keeps the low 16 bits of
  // the fp32 master beside each bf16 parameter (TE optimizers/fused_adam.py:213-215, 367-379).
  const bool bf16_params = p.precision == Precision::kBf16 ||
                           (p.precision == Precision::kFp8 && p.fp8_recipe == Fp8Recipe::kDelayed &&
                            !p.fp8_param_gather);
  if (p.precision_aware_optimizer && p.store_param_remainders &&
      p.main_params_dtype == StateDtype::kFp32 && bf16_params) {
    return 2;
  }
  return state_dtype_bytes(p.main_params_dtype);
}

double grad_element_bytes(const PlanSpec& p) {
  return p.precision == Precision::kFp16 || p.grad_reduce_in_bf16 ? 2.0 : 4.0;
}

double optimizer_state_bytes(const PlanSpec& p) {
  return master_param_bytes(p) + state_dtype_bytes(p.exp_avg_dtype) +
         state_dtype_bytes(p.exp_avg_sq_dtype);
}

double adam_bytes_per_param(const PlanSpec& p) {
  // A master stored as remainders also reads the bf16 parameter to rebuild the fp32 value
  // (TE's multi_tensor_adam_param_remainder, optimizers/fused_adam.py:367-379).
  const double remainder_read =
      master_param_bytes(p) < state_dtype_bytes(p.main_params_dtype) ? 2 : 0;
  return 2 * optimizer_state_bytes(p) + state_dtype_bytes(p.main_grads_dtype) + 2 + remainder_read;
}

StageMemory sharded_memory(const PlanSpec& plan, double d, double params, double layer,
                           double bucket, double weight_elem, double grad_elem) {
  const double opt_share = plan.distributed_optimizer ? d : 1;
  StageMemory m;
  m.weights = plan.shards_params() && d > 1 ? params * weight_elem / d + 2 * layer * weight_elem
                                            : params * weight_elem;
  m.gradients = plan.shards_gradients() && d > 1
                    ? params * grad_elem / d + std::min(bucket, params) * grad_elem
                    : params * grad_elem;
  // The fp32 main gradients of a bf16 reduction (none when the precision-aware optimizer steps
  // on bf16 main gradients): Megatron's distributed optimizer makes them in step()
  // (_copy_model_grads_to_main_grads) and drops them at the next zero_grad, when no activation
  // is held, so build_workload counts them only where they exceed what the backward held.
  if (plan.grad_reduce_in_bf16 && plan.precision != Precision::kFp16 &&
      plan.main_grads_dtype == StateDtype::kFp32) {
    m.step_main_grads = params * 4 / opt_share;
  }
  m.optimizer = params * optimizer_state_bytes(plan) / opt_share;
  return m;
}

void schedule_memory(const std::vector<StageProgram>& programs, Workload* w) {
  for (size_t s = 0; s < programs.size(); ++s) {
    StageWork& st = w->stages[s];
    double live = 0, peak = 0;
    int count = 0, peak_count = 0;
    const std::vector<Instr>& instrs = programs[s].instrs;
    for (size_t k = 0; k < instrs.size(); ++k) {
      const Instr& in = instrs[k];
      if (in.kind == InstrKind::kForward && in.with_next && k + 1 < instrs.size()) {
        // The combined 1F1B runs the forward's layers while the backward frees its own, layer
        // by layer (schedule_layer_1f1b): the step peaks one forward layer above the larger
        // of the two micro-batches' activations, not at their sum.
        const ChunkWork& f = st.chunks[in.chunk];
        const ChunkWork& b = st.chunks[instrs[k + 1].chunk];
        const double layer = f.activation_bytes / std::max(1, f.num_layers);
        peak =
            std::max(peak, live + std::max(0.0, f.activation_bytes - b.activation_bytes) + layer);
        live += f.activation_bytes;
        peak_count = std::max(peak_count, ++count);
      } else if (in.kind == InstrKind::kForward) {
        live += st.chunks[in.chunk].activation_bytes;
        peak = std::max(peak, live);
        peak_count = std::max(peak_count, ++count);
      } else if (in.kind == InstrKind::kBackward) {
        live -= st.chunks[in.chunk].activation_bytes;
        --count;
      }
    }
    st.memory.activations = peak;
    st.memory.microbatches_in_flight = peak_count;
  }
}

double layer_params(const ModelSpec& m) {
  const double h = m.hidden_size, f = double(m.ffn_hidden_size);
  const double kv = 2 * h * m.num_query_groups / m.num_attention_heads;
  // Linear biases with add_bias_linear (ModelSpec::linear_biases: by default GPT-style models
  // carry them, gated Llama-style ones not). Two norms per layer: LayerNorm has a weight and a
  // bias, RMSNorm a weight.
  const double norms = m.rms_norm ? 2 * h : 4 * h;
  const bool bias = m.linear_biases();
  if (m.swiglu) return attention_params(m) + 3 * h * f + (bias ? 2 * f + h : 0) + norms;
  const double qk_norm = m.qk_layernorm ? (m.rms_norm ? 2 : 4) * m.head_dim() : 0;
  return h * (h + kv) + h * h + 2 * h * f + qk_norm + (bias ? (h + kv) + h + f + h : 0) + norms;
}

double model_params(const ModelSpec& m) {
  const double h = m.hidden_size, v = double(m.vocab_size);
  const double embed = v * h + (m.learned_position_embeddings ? m.seq_length * h : 0);
  const double output = m.untie_embeddings_and_output_weights ? v * h : 0;
  const double final_norm = m.rms_norm ? h : 2 * h;
  double layers = 0;
  for (int l = 0; l < m.num_layers; ++l) layers += layer_params_at(m, l);
  return layers + embed + output + final_norm;
}

double memory_margin_bytes(const ClusterSpec& cluster, const Workload& workload) {
  double peak = 0;
  for (const StageWork& st : workload.stages) peak = std::max(peak, st.memory.device_total());
  return cluster.gpu.memory_bytes - peak;
}

}  // namespace trident
