// The `model` section of the settings table (config/settings_rows.h): a decoder-only
// transformer, its attention, MoE and position-embedding fields.
#include "config/limits.h"
#include "config/settings_rows.h"

namespace trident {

void append_model_section(std::vector<SettingSection>* out) {
  using K = SettingKind;
  out->push_back(
      {"model",
       "A decoder-only transformer; field names follow Megatron-LM, and a Hugging Face "
       "config.json is read through the names shown.",
       {
           req(row("name", K::kString, "Model name, shown in reports.")),
           hf(mg(req(integer("num_layers", 1, limits::kMaxLayers, "Transformer layers.")),
                 "--num-layers"),
              "num_hidden_layers"),
           hf(mg(req(integer("hidden_size", 1, limits::kMaxHiddenSize, "Model width h.")),
                 "--hidden-size"),
              "hidden_size"),
           hf(mg(req(integer("num_attention_heads", 1, limits::kMaxHeads, "Attention heads a.")),
                 "--num-attention-heads"),
              "num_attention_heads"),
           hf(mg(derived(integer("num_query_groups", 1, limits::kMaxHeads,
                                 "Key/value heads (grouped-query attention)."),
                         "num_attention_heads"),
                 "--num-query-groups"),
              "num_key_value_heads"),
           hf(mg(derived(integer("ffn_hidden_size", 1, limits::kMaxFfnHiddenSize,
                                 "MLP width (required with swiglu)."),
                         "4 × hidden_size"),
                 "--ffn-hidden-size"),
              "intermediate_size"),
           mg(hint(req(integer("seq_length", 1, limits::kMaxSeqLength,
                               "Training sequence length s.")),
                   "the training sequence length; a Hugging Face config.json has only the context "
                   "window (max_position_embeddings), so give it with --set model.seq_length=N or "
                   "in the scenario's overrides: (model.seq_length: N)"),
              "--seq-length"),
           hf(mg(req(integer("vocab_size", 1, limits::kMaxVocabSize, "Vocabulary size V.")),
                 "--vocab-size"),
              "vocab_size"),
           mg(def(boolean("swiglu", "Gated MLP with three weight matrices (Llama)."), "false"),
              "--swiglu"),
           mg(def(choice("position_embedding", {"learned", "learned_absolute", "rope", "alibi"},
                         "Learned absolute positions (an s×h table; Megatron-LM's "
                         "learned_absolute) or none in weights (rope, alibi)."),
                  "learned"),
              "--position-embedding-type"),
           hf(mg(def(boolean("untie_embeddings_and_output_weights",
                             "Separate output (logits) matrix instead of the word embeddings."),
                     "false"),
                 "--untie-embeddings-and-output-weights"),
              "tie_word_embeddings (negated)"),
           hf(mg(def(number("attention_dropout", 0, 1,
                            "Dropout on the attention probabilities; its kernels and masks run "
                            "only when > 0 (Llama-family models train without)."),
                     "0.1"),
                 "--attention-dropout"),
              "attention_dropout / attn_pdrop"),
           hf(mg(def(number("hidden_dropout", 0, 1,
                            "Dropout on the attention and MLP outputs and the embeddings."),
                     "0.1"),
                 "--hidden-dropout"),
              "hidden_dropout / resid_pdrop"),
           hf(mg(def(choice("normalization", {"LayerNorm", "RMSNorm"},
                            "Layer norm type (RMSNorm has no bias, no mean)."),
                     "LayerNorm"),
                 "--normalization"),
              "rms_norm_eps → RMSNorm"),
           hf(mg(derived(integer("kv_channels", 1, limits::kMaxHiddenSize,
                                 "Dimension of one attention head (Qwen3: 128 at hidden 2048 "
                                 "with 32 heads)."),
                         "hidden_size / num_attention_heads"),
                 "--kv-channels"),
              "head_dim"),
           // Megatron-Core TransformerConfig.add_bias_linear (transformer_config.py; the flag
           // --disable-bias-linear turns it off): biases on QKV, the attention projection and
           // both MLP matrices, routed experts included.
           mg(derived(boolean("add_bias_linear",
                              "Biases on the linear layers (QKV, attention projection, FC1, FC2, "
                              "the routed experts'): their parameters, gradients and optimizer "
                              "state; the bias adds run inside the GEMM epilogues and the fused "
                              "bias-dropout-add, so no kernel of their own. Megatron's default is "
                              "true; Llama-style recipes pass --disable-bias-linear."),
                      "biases on dense GPT-style layers; none with swiglu, none on experts"),
              "--disable-bias-linear (negated)"),
           mg(def(boolean("qk_layernorm",
                          "A norm (the model's normalization) on each head of Q and K after "
                          "the QKV projection (Qwen3, OLMo 2): its kernels, weights and the "
                          "activations it keeps."),
                  "false"),
              "--qk-layernorm"),
           mg(def(integer("rotary_base", 1, 1e12,
                          "RoPE base θ: which angles rotate Q and K, not how much work "
                          "(same kernels, same bytes)."),
                  "10000"),
              "--rotary-base"),
           mg(def(number("rotary_scaling_factor", 1, 1e6,
                         "RoPE frequency scaling (Llama 3.1 scaling, DeepSeek YaRN: 40): "
                         "changes the angles, not the work."),
                  "1"),
              "--rotary-scaling-factor"),
           // Mixture of experts (Megatron-Core megatron/core/transformer/moe/).
           hf(mg(derived(integer("num_experts", 1, limits::kMaxExperts,
                                 "Routed experts per MoE layer."),
                         "none: every MLP is dense"),
                 "--num-experts"),
              "num_local_experts / num_experts / n_routed_experts"),
           hf(mg(def(integer("moe_router_topk", 1, limits::kMaxExperts,
                             "Experts each token is routed to."),
                     "2"),
                 "--moe-router-topk"),
              "num_experts_per_tok"),
           hf(mg(derived(integer("moe_router_num_groups", 1, limits::kMaxExperts,
                                 "Group-limited routing: the experts split into this many "
                                 "equal groups of consecutive experts, and each token picks "
                                 "moe_router_group_topk groups before its top-k experts "
                                 "(DeepSeek-V3: 8, one per node at EP 64)."),
                         "none: no group limit"),
                 "--moe-router-num-groups"),
              "n_group"),
           hf(mg(derived(integer("moe_router_group_topk", 1, limits::kMaxExperts,
                                 "Groups each token's experts are picked from, with "
                                 "moe_router_num_groups (DeepSeek-V3: 4)."),
                         "none: no group limit"),
                 "--moe-router-group-topk"),
              "topk_group"),
           // Router details (megatron/core/transformer/moe/router.py TopKRouter,
           // moe_utils.py topk_routing_with_score_function): they decide which experts a token
           // picks and with what weight, not how many tokens move or how much the kernels do;
           // trident routes balanced (plus plan.moe_expert_load_imbalance) whatever the scores.
           mg(def(boolean("moe_router_pre_softmax",
                          "Softmax (or sigmoid) before the top-k instead of after: the same "
                          "T × E scores read, the same traffic."),
                  "false"),
              "--moe-router-pre-softmax"),
           mg(def(choice("moe_router_score_function", {"softmax", "sigmoid", "sqrtsoftplus"},
                         "Routing score function (DeepSeek-V3: sigmoid): an element-wise "
                         "function of the same T × E scores, the same traffic."),
                  "softmax"),
              "--moe-router-score-function"),
           mg(number("moe_router_topk_scaling_factor", 1e-6, 1e6,
                     "Scales the routing weights of the top-k experts (DeepSeek-V3: 2.5), "
                     "not the traffic. Absent: no scaling."),
              "--moe-router-topk-scaling-factor"),
           mg(def(boolean("moe_router_enable_expert_bias",
                          "Aux-loss-free balancing: a per-expert bias added to the scores before "
                          "the top-k (E fp32 numbers per layer, a buffer outside the optimizer); "
                          "needs moe_router_score_function sigmoid or sqrtsoftplus. Routing "
                          "imbalance is plan.moe_expert_load_imbalance."),
                  "false"),
              "--moe-router-enable-expert-bias"),
           hf(mg(derived(integer("moe_ffn_hidden_size", 1, limits::kMaxFfnHiddenSize,
                                 "Width of one routed expert's MLP."),
                         "ffn_hidden_size"),
                 "--moe-ffn-hidden-size"),
              "moe_intermediate_size"),
           hf(mg(derived(
                     integer("moe_shared_expert_intermediate_size", 1, limits::kMaxFfnHiddenSize,
                             "Width of the shared expert every token visits (all shared "
                             "experts together)."),
                     "none: no shared expert"),
                 "--moe-shared-expert-intermediate-size"),
              "shared_expert_intermediate_size / n_shared_experts × moe_intermediate_size"),
           hf(mg(def(row("moe_layer_freq", K::kList,
                         "Which layers are MoE: an integer N (layers 0, N, 2N, ...) or a list "
                         "of 0/1, one per layer."),
                     "1"),
                 "--moe-layer-freq"),
              "decoder_sparse_step / moe_layer_freq / interleave_moe_layer_step"),
           hf(def(integer("first_k_dense_replace", 0, limits::kMaxLayers,
                          "The first k layers keep a dense MLP (DeepSeek; Megatron writes it "
                          "into --moe-layer-freq as [0]*k+[1]*(L-k))."),
                  "0"),
              "first_k_dense_replace"),
           // Multi-latent attention (Megatron-Core multi_latent_attention.py).
           mg(def(boolean("multi_latent_attention",
                          "DeepSeek multi-latent attention: low-rank query and key/value "
                          "projections, rotary dimensions apart."),
                  "false"),
              "--multi-latent-attention"),
           hf(mg(derived(integer("q_lora_rank", 1, limits::kMaxHiddenSize,
                                 "Rank of the query's low-rank projection."),
                         "none: queries projected directly"),
                 "--q-lora-rank"),
              "q_lora_rank"),
           hf(mg(def(integer("kv_lora_rank", 1, limits::kMaxHiddenSize,
                             "Rank of the shared key/value latent."),
                     "32"),
                 "--kv-lora-rank"),
              "kv_lora_rank"),
           hf(mg(def(integer("qk_head_dim", 1, limits::kMaxHiddenSize,
                             "Query/key dimensions per head without rotary embedding."),
                     "128"),
                 "--qk-head-dim"),
              "qk_nope_head_dim"),
           hf(mg(def(integer("qk_pos_emb_head_dim", 1, limits::kMaxHiddenSize,
                             "Rotary query/key dimensions per head (the key's are shared by all "
                             "heads)."),
                     "64"),
                 "--qk-pos-emb-head-dim"),
              "qk_rope_head_dim"),
           hf(mg(def(integer("v_head_dim", 1, limits::kMaxHiddenSize, "Value dimensions per head."),
                     "128"),
                 "--v-head-dim"),
              "v_head_dim"),
           // Multi-token prediction (Megatron-Core multi_token_prediction.py; docs/moe.md).
           hf(mg(derived(integer("mtp_num_layers", 0, limits::kMaxLayers,
                                 "Multi-token-prediction depths after the decoder (DeepSeek-V3: "
                                 "1), each one more transformer layer of the last layer's kind, "
                                 "a 2h x h projection and its own logits and loss, on the last "
                                 "pipeline stage unless the layout's 'm' places them."),
                         "none (0): no multi-token prediction"),
                 "--mtp-num-layers"),
              "num_nextn_predict_layers"),
           mg(def(number("mtp_loss_scaling_factor", 0, 1e6,
                         "Weight of the multi-token-prediction loss; changes no time or memory "
                         "(accepted for launch lines that give it)."),
                  "0.1"),
              "--mtp-loss-scaling-factor"),
           // Local attention (docs/attention.md): Megatron-Core TransformerConfig.window_size,
           // window_attn_skip_freq and no_rope_freq; Hugging Face Llama 4's chunked attention.
           hf(mg(derived(row("window_size", K::kList,
                             "Sliding-window attention [L, R]: query i attends keys i - L .. i "
                             "(L + 1 keys; the causal mask drops R, 0 or -1); L -1: no window."),
                         "none: every layer attends its whole causal prefix"),
                 "--window-size"),
              "sliding_window"),
           hf(mg(derived(row("window_attn_skip_freq", K::kList,
                             "Which layers keep full attention beside window_size: an integer N "
                             "(layers N, 2N, ... counted from 1; gpt-oss: 2) or a list of 0/1 "
                             "per layer, 1 where the layer uses the window."),
                         "none: every layer uses the window"),
                 "--window-attn-skip-freq"),
              "layer_types"),
           hf(derived(integer("attention_chunk_size", 1, 1e9,
                              "Chunked attention (Llama 4: 8192): a RoPE layer's query attends "
                              "only the keys of its own chunk; need not divide seq_length (the "
                              "last chunk is shorter)."),
                      "none: no chunked attention"),
              "attention_chunk_size"),
           hf(mg(derived(row("no_rope_freq", K::kList,
                             "Layers without RoPE (Llama 4's global NoPE layers, which chunked "
                             "attention leaves whole): an integer N (every Nth layer, counted "
                             "from 1; must divide num_layers) or a list of 0/1, 1 = no RoPE."),
                         "none: RoPE on every layer"),
                 "--no-rope-freq"),
              "no_rope_layers"),
       }});
}

}  // namespace trident
