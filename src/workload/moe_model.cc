#include "workload/moe_model.h"

#include "workload/stage_work.h"

namespace trident {
namespace {

double mlp_matrices(const ModelSpec& m) { return m.swiglu ? 3 : 2; }

// The biases of one expert of width f (FC1's g f outputs, FC2's h) when the model has them.
double expert_biases(const ModelSpec& m, double f) {
  return m.expert_biases() ? (m.swiglu ? 2 : 1) * f + m.hidden_size : 0;
}

}  // namespace

double attention_params(const ModelSpec& m) {
  const double h = m.hidden_size, a = m.num_attention_heads;
  if (m.multi_latent_attention) {
    const double qk = m.qk_head_dim, rope = m.qk_pos_emb_head_dim, v = m.v_head_dim;
    const double q_lora = m.q_lora_rank, kv_lora = m.kv_lora_rank;
    // linear_q_down_proj, q_layernorm, linear_q_up_proj (or linear_q_proj without a rank).
    const double q =
        q_lora > 0 ? h * q_lora + q_lora + q_lora * a * (qk + rope) : h * a * (qk + rope);
    // linear_kv_down_proj (latent plus the shared rotary key), kv_layernorm, linear_kv_up_proj.
    const double kv = h * (kv_lora + rope) + kv_lora + kv_lora * a * (qk + v);
    // Only linear_proj has a bias with add_bias_linear (multi_latent_attention.py builds the
    // down- and up-projections with bias=False; attention.py's linear_proj takes the flag).
    const double biases = m.linear_biases() ? h : 0;
    return q + kv + a * v * h + biases;  // linear_proj
  }
  const double q = a * m.head_dim(), kv = 2.0 * m.num_query_groups * m.head_dim();
  const double weights = h * (q + kv) + q * h;
  // QK norm: a weight per head dimension for Q and for K (and a bias each under LayerNorm),
  // shared by the heads (Megatron-Core's q_layernorm / k_layernorm over hidden_size_per_head).
  const double qk_norm = m.qk_layernorm ? (m.rms_norm ? 2 : 4) * m.head_dim() : 0;
  return weights + qk_norm + (m.linear_biases() ? (q + kv) + h : 0);
}

double routed_expert_params(const ModelSpec& m) {
  const double f = double(m.moe_ffn_hidden_size);
  return mlp_matrices(m) * m.hidden_size * f + expert_biases(m, f);
}

double shared_expert_params(const ModelSpec& m) {
  const double f = double(m.moe_shared_expert_intermediate_size);
  if (f <= 0) return 0;
  return mlp_matrices(m) * m.hidden_size * f + expert_biases(m, f);
}

double router_params(const ModelSpec& m) { return double(m.hidden_size) * m.num_experts; }

double moe_mlp_params(const ModelSpec& m) {
  return router_params(m) + m.num_experts * routed_expert_params(m) + shared_expert_params(m);
}

double moe_active_mlp_params(const ModelSpec& m) {
  return router_params(m) + m.moe_router_topk * routed_expert_params(m) + shared_expert_params(m);
}

int moe_layer_count(const ModelSpec& m) {
  int n = 0;
  for (int l = 0; l < m.num_layers; ++l) n += m.is_moe_layer(l) ? 1 : 0;
  return n;
}

double layer_params_at(const ModelSpec& m, int l) {
  if (!m.is_moe_layer(l)) return layer_params(m);
  const double norms = m.rms_norm ? 2.0 * m.hidden_size : 4.0 * m.hidden_size;
  return attention_params(m) + moe_mlp_params(m) + norms;
}

double active_params(const ModelSpec& m) {
  const double inactive = (m.num_experts - m.moe_router_topk) * routed_expert_params(m);
  return model_params(m) - moe_layer_count(m) * inactive;
}

double megatron_model_flops(const ModelSpec& m, double batch_size) {
  const double h = m.hidden_size, s = m.seq_length, a = m.num_attention_heads;
  const double layers = m.num_layers;
  const double moe_layers = moe_layer_count(m), dense_layers = layers - moe_layers;
  const double gated = m.swiglu ? 1.5 : 1.0;
  const double routed_to = m.moe() ? m.moe_router_topk : 0;
  const double moe_f = double(m.moe_ffn_hidden_size);
  const double shared_f = double(m.moe_shared_expert_intermediate_size);
  // 3 (forward, weight and input gradients) x 2 (two GEMMs of each size) x 2 (FLOPs per MAC).
  const double expansion = 3 * 2 * 2;
  double self_attn = 0;
  if (m.multi_latent_attention) {
    const double qk = m.qk_head_dim, rope = m.qk_pos_emb_head_dim, v = m.v_head_dim;
    const double q_term =
        m.q_lora_rank > 0 ? m.q_lora_rank * (h + a * (qk + rope) + 1) : h * a * (qk + rope);
    self_attn = 3 * 2 * layers *
                (q_term + m.kv_lora_rank * (h + a * (qk + v) + 1) + h * rope + a * v * h +
                 s * (a * (qk + rope)) / 2 + s * a * v / 2);
  } else {
    const double q_ratio = a * m.head_dim() / h;
    self_attn =
        expansion * layers * h * h * ((1 + double(m.num_query_groups) / a + s / h / 2) * q_ratio);
  }
  const double mlp = expansion * layers * h *
                     (double(m.ffn_hidden_size) * gated * (dense_layers / layers) +
                      moe_f * routed_to * gated * (moe_layers / layers) +
                      shared_f * gated * (moe_layers / layers));
  const double logits = 3 * 2 * h * double(m.vocab_size);
  return batch_size * s * (mlp + self_attn + logits);
}

}  // namespace trident
