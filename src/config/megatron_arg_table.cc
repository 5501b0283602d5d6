#include "config/megatron_arg_table.h"

namespace trident::megatron {

const std::map<std::string, Arg>& known_args() {
  static const std::map<std::string, Arg> args = {
      {"--num-layers", {Use::kModel, false, "num_layers"}},
      {"--hidden-size", {Use::kModel, false, "hidden_size"}},
      {"--num-attention-heads", {Use::kModel, false, "num_attention_heads"}},
      {"--num-query-groups", {Use::kSpecial, false, ""}},
      {"--group-query-attention", {Use::kSpecial, true, ""}},
      {"--ffn-hidden-size", {Use::kModel, false, "ffn_hidden_size"}},
      {"--seq-length", {Use::kModel, false, "seq_length"}},
      {"--swiglu", {Use::kModel, true, "swiglu"}},
      {"--untie-embeddings-and-output-weights",
       {Use::kModel, true, "untie_embeddings_and_output_weights"}},
      {"--position-embedding-type", {Use::kSpecial, false, ""}},
      {"--use-rotary-position-embeddings", {Use::kSpecial, true, ""}},
      {"--vocab-size", {Use::kSpecial, false, ""}},
      {"--padded-vocab-size", {Use::kSpecial, false, ""}},
      {"--make-vocab-size-divisible-by", {Use::kSpecial, false, ""}},
      {"--tensor-model-parallel-size", {Use::kPlan, false, "tensor_parallel"}},
      {"--pipeline-model-parallel-size", {Use::kPlan, false, "pipeline_parallel"}},
      {"--num-layers-per-virtual-pipeline-stage", {Use::kSpecial, false, ""}},
      {"--num-virtual-stages-per-pipeline-rank", {Use::kSpecial, false, ""}},
      {"--micro-batch-size", {Use::kPlan, false, "micro_batch_size"}},
      {"--global-batch-size", {Use::kPlan, false, "global_batch_size"}},
      {"--sequence-parallel", {Use::kPlan, true, "sequence_parallel"}},
      {"--use-distributed-optimizer", {Use::kPlan, true, "distributed_optimizer"}},
      {"--overlap-grad-reduce", {Use::kPlan, true, "overlap_grad_reduce"}},
      {"--ddp-bucket-size", {Use::kPlan, false, "grad_bucket_size"}},
      {"--overlap-param-gather", {Use::kPlan, true, "overlap_param_gather"}},
      {"--num-distributed-optimizer-instances",
       {Use::kPlan, false, "num_distributed_optimizer_instances"}},
      {"--grad-reduce-in-bf16", {Use::kPlan, true, "grad_reduce_in_bf16"}},
      {"--tp-comm-overlap", {Use::kPlan, true, "tp_comm_overlap"}},
      {"--use-precision-aware-optimizer", {Use::kPlan, true, "use_precision_aware_optimizer"}},
      {"--main-params-dtype", {Use::kPlan, false, "main_params_dtype"}},
      {"--main-grads-dtype", {Use::kPlan, false, "main_grads_dtype"}},
      {"--exp-avg-dtype", {Use::kPlan, false, "exp_avg_dtype"}},
      {"--exp-avg-sq-dtype", {Use::kPlan, false, "exp_avg_sq_dtype"}},
      {"--data-parallel-sharding-strategy", {Use::kPlan, false, "data_parallel_sharding_strategy"}},
      // Megatron-Core FSDP: plan.fsdp (optim_grads_params unless the strategy is given).
      {"--use-megatron-fsdp", {Use::kPlan, true, "fsdp"}},
      {"--use-custom-fsdp", {Use::kPlan, true, "fsdp"}},
      // Averaging inside the reduction instead of scaling before it: the same bytes.
      {"--ddp-average-in-collective", {Use::kIgnored, true, "same bytes and flows"}},
      {"--recompute-granularity", {Use::kPlan, false, "recompute"}},
      {"--recompute-method", {Use::kSpecial, false, ""}},
      {"--recompute-num-layers", {Use::kSpecial, false, ""}},
      {"--decoder-first-pipeline-num-layers",
       {Use::kPlan, false, "decoder_first_pipeline_num_layers"}},
      {"--decoder-last-pipeline-num-layers",
       {Use::kPlan, false, "decoder_last_pipeline_num_layers"}},
      {"--pipeline-model-parallel-layout", {Use::kPlan, false, "pipeline_model_parallel_layout"}},
      {"--account-for-embedding-in-pipeline-split",
       {Use::kPlan, true, "account_for_embedding_in_pipeline_split"}},
      {"--account-for-loss-in-pipeline-split",
       {Use::kPlan, true, "account_for_loss_in_pipeline_split"}},
      {"--bf16", {Use::kSpecial, true, ""}},
      {"--fp16", {Use::kSpecial, true, ""}},
      {"--fp8-format", {Use::kSpecial, false, ""}},
      // Delayed scaling's amax history (Transformer Engine's DelayedScaling recipe): how many
      // past amaxes are kept and which one sets the scale. The cast, the amax reduction and
      // the GEMMs cost the same whatever they are, so they are checked and recorded as
      // ignored.
      {"--fp8-amax-history-len", {Use::kSpecial, false, ""}},
      {"--fp8-amax-compute-algo", {Use::kSpecial, false, ""}},
      {"--fp8-margin", {Use::kSpecial, false, ""}},
      {"--context-parallel-size", {Use::kPlan, false, "context_parallel"}},
      {"--cp-comm-type", {Use::kSpecial, false, ""}},
      {"--expert-model-parallel-size", {Use::kPlan, false, "expert_model_parallel_size"}},
      {"--expert-tensor-parallel-size", {Use::kPlan, false, "expert_tensor_parallel_size"}},
      {"--num-experts", {Use::kModel, false, "num_experts"}},
      {"--moe-router-topk", {Use::kModel, false, "moe_router_topk"}},
      {"--moe-ffn-hidden-size", {Use::kModel, false, "moe_ffn_hidden_size"}},
      {"--moe-shared-expert-intermediate-size",
       {Use::kModel, false, "moe_shared_expert_intermediate_size"}},
      {"--moe-layer-freq", {Use::kSpecial, false, ""}},
      // Local attention (docs/attention.md): --window-size L,R (tuple_type), and the layer
      // patterns --window-attn-skip-freq and --no-rope-freq (moe_freq_type, as
      // --moe-layer-freq). Megatron-LM has no chunked attention argument.
      {"--window-size", {Use::kSpecial, false, ""}},
      {"--window-attn-skip-freq", {Use::kSpecial, false, ""}},
      {"--no-rope-freq", {Use::kSpecial, false, ""}},
      {"--moe-token-dispatcher-type", {Use::kSpecial, false, ""}},
      // The flex dispatcher's backend: --moe-enable-deepep (older Megatron-Core) or
      // --moe-flex-dispatcher-backend (newer; deepep by default).
      {"--moe-enable-deepep", {Use::kSpecial, true, ""}},
      {"--moe-flex-dispatcher-backend", {Use::kSpecial, false, ""}},
      {"--moe-router-num-groups", {Use::kModel, false, "moe_router_num_groups"}},
      {"--moe-router-group-topk", {Use::kModel, false, "moe_router_group_topk"}},
      // Router details that decide which experts a token picks, not how many tokens move:
      // model settings that trident validates (the expert bias needs sigmoid scores) and routes
      // balanced (plus moe_expert_load_imbalance) whatever they say.
      {"--moe-router-score-function", {Use::kModel, false, "moe_router_score_function"}},
      {"--moe-router-enable-expert-bias", {Use::kModel, true, "moe_router_enable_expert_bias"}},
      {"--moe-router-bias-update-rate", {Use::kIgnored, false, "the expert bias's update rate"}},
      {"--moe-router-topk-scaling-factor", {Use::kModel, false, "moe_router_topk_scaling_factor"}},
      {"--moe-router-pre-softmax", {Use::kModel, true, "moe_router_pre_softmax"}},
      {"--moe-router-force-load-balancing", {Use::kPlan, true, "moe_router_force_load_balancing"}},
      {"--moe-z-loss-coeff", {Use::kIgnored, false, "a loss coefficient"}},
      {"--moe-token-drop-policy",
       {Use::kIgnored, false, "which tokens are dropped, not how many (the capacity factor)"}},
      {"--moe-router-dtype",
       {Use::kIgnored, false,
        "the router's softmax and top-k precision; trident costs the T x E router GEMM at 16 "
        "bits either way (a small share of the layer)"}},
      {"--moe-permute-fusion",
       {Use::kIgnored, true, "trident costs the permutation by its HBM bytes, fused or not"}},
      {"--moe-router-fusion",
       {Use::kIgnored, true, "trident costs the router's top-k by its HBM bytes, fused or not"}},
      {"--moe-deepep-num-sms",
       {Use::kIgnored, false,
        "SMs DeepEP's kernels occupy: trident takes Megatron-Core's default (20), which slows "
        "the compute beside an all-to-all under overlap_moe_expert_parallel_comm; another "
        "value is not read"}},
      {"--moe-expert-capacity-factor", {Use::kPlan, false, "moe_expert_capacity_factor"}},
      {"--moe-pad-expert-input-to-capacity",
       {Use::kPlan, true, "moe_pad_expert_input_to_capacity"}},
      {"--moe-shared-expert-overlap", {Use::kPlan, true, "moe_shared_expert_overlap"}},
      {"--overlap-moe-expert-parallel-comm",
       {Use::kPlan, true, "overlap_moe_expert_parallel_comm"}},
      {"--delay-wgrad-compute",
       {Use::kIgnored, true,
        "weight-gradient GEMMs deferred to widen the combined 1F1B's overlap: not modelled (each "
        "backward unit runs its weight gradients before its all-to-all starts)"}},
      {"--moe-expert-rank-capacity-factor", {Use::kPlan, false, "moe_expert_rank_capacity_factor"}},
      {"--moe-paged-stash", {Use::kPlan, true, "moe_paged_stash"}},
      // CUDA graphs: plan.cuda_graph_impl and plan.cuda_graph_scope (megatron_args.cc,
      // cuda_graph_plan); --enable-cuda-graph and --external-cuda-graph are the older names
      // of --cuda-graph-impl local and transformer_engine.
      {"--cuda-graph-impl", {Use::kSpecial, false, ""}},
      {"--enable-cuda-graph", {Use::kSpecial, true, ""}},
      {"--external-cuda-graph", {Use::kSpecial, true, ""}},
      // Megatron's default is false (SequentialMLP); set after the loop for MoE models.
      {"--moe-grouped-gemm", {Use::kSpecial, true, ""}},
      {"--disable-bias-linear", {Use::kSpecial, true, ""}},
      {"--qk-layernorm", {Use::kModel, true, "qk_layernorm"}},
      {"--rotary-base", {Use::kModel, false, "rotary_base"}},
      {"--rotary-scaling-factor", {Use::kModel, false, "rotary_scaling_factor"}},
      {"--no-overlap-p2p-communication", {Use::kSpecial, true, ""}},
      // Megatron-Core fine-grained activation offloading (TransformerConfig.offload_modules):
      // plan.activation_offload, with --offload-modules.
      {"--fine-grained-activation-offloading", {Use::kSpecial, true, ""}},
      {"--moe-router-load-balancing-type",
       {Use::kIgnored, false,
        "the balancing loss; routing imbalance is "
        "plan.moe_expert_load_imbalance"}},
      {"--moe-aux-loss-coeff", {Use::kIgnored, false, "a loss coefficient"}},
      {"--multi-latent-attention", {Use::kModel, true, "multi_latent_attention"}},
      {"--q-lora-rank", {Use::kModel, false, "q_lora_rank"}},
      {"--kv-lora-rank", {Use::kModel, false, "kv_lora_rank"}},
      {"--qk-head-dim", {Use::kModel, false, "qk_head_dim"}},
      {"--qk-pos-emb-head-dim", {Use::kModel, false, "qk_pos_emb_head_dim"}},
      {"--v-head-dim", {Use::kModel, false, "v_head_dim"}},
      {"--mtp-num-layers", {Use::kModel, false, "mtp_num_layers"}},
      {"--mtp-loss-scaling-factor", {Use::kModel, false, "mtp_loss_scaling_factor"}},
      {"--kv-channels", {Use::kModel, false, "kv_channels"}},
      {"--attention-backend", {Use::kSpecial, false, ""}},
      // Refused: they change the step and trident does not model them.
      {"--use-flash-attn", {Use::kSpecial, true, ""}},
      {"--attention-dropout", {Use::kModel, false, "attention_dropout"}},
      {"--hidden-dropout", {Use::kModel, false, "hidden_dropout"}},
      {"--normalization", {Use::kModel, false, "normalization"}},
      {"--fp8-recipe", {Use::kPlan, false, "fp8_recipe"}},
      {"--fp8-dot-product-attention", {Use::kPlan, true, "fp8_attention"}},
      {"--fp8-param-gather", {Use::kPlan, true, "fp8_param_gather"}},
      {"--fp4-format", {Use::kSpecial, false, ""}},
      {"--fp4-recipe", {Use::kPlan, false, "fp4_recipe"}},
      {"--first-last-layers-bf16", {Use::kPlan, true, "first_last_layers_bf16"}},
      {"--num-layers-at-start-in-bf16", {Use::kPlan, false, "num_layers_at_start_in_bf16"}},
      {"--num-layers-at-end-in-bf16", {Use::kPlan, false, "num_layers_at_end_in_bf16"}},
      {"--optimizer-cpu-offload", {Use::kPlan, true, "optimizer_cpu_offload"}},
      {"--optimizer-offload-fraction", {Use::kPlan, false, "optimizer_offload_fraction"}},
      {"--overlap-cpu-optimizer-d2h-h2d", {Use::kPlan, true, "overlap_cpu_optimizer_d2h_h2d"}},
      // Megatron-Core's optimizer/__init__.py resets the GPU optimizer to TE's FusedAdam for
      // adam right after this flag chooses torch's, and the CPU one is torch's either way.
      {"--use-torch-optimizer-for-cpu-offload",
       {Use::kIgnored, true, "the GPU share runs FusedAdam for adam either way"}},
      {"--num-layers-per-stage", {Use::kRefused, false, "use --decoder-first/last-..."}},
      {"--encoder-num-layers", {Use::kRefused, false, "encoders are not modelled"}},
  };
  return args;
}

// Prefixes and names of arguments that do not change one step (logging, data, checkpoints,
// optimizer hyper-parameters, initialisation, numerics of the same cost).
bool is_ignored(const std::string& name, std::string* why) {
  static const char* const prefixes[] = {
      "--log",
      "--tensorboard",
      "--wandb",
      "--data-",
      "--save",
      "--load",
      "--eval-",
      "--lr",
      "--min-lr",
      "--adam-",
      "--weight-decay",
      "--clip-grad",
      "--seed",
      "--init-method",
      "--train-iters",
      "--train-samples",
      "--exit-",
      "--tokenizer-",
      "--vocab-file",
      "--merge-file",
      "--split",
      "--ckpt-",
      "--no-load-",
      "--finetune",
      "--timing-",
      "--num-workers",
      "--dataloader-",
      "--mock-data",
      "--distributed-backend",
      "--distributed-timeout",
      "--use-mcore-models",
      "--transformer-impl",
      "--norm-epsilon",
      "--rotary-",
      "--no-masked-softmax-fusion",
      "--no-bias-",
      "--attention-softmax-in-fp32",
      "--accumulate-allreduce-grads-in-fp32",
      "--max-position-embeddings",
      "--use-checkpoint-",
      "--async-save",
      "--no-gradient-",
      "--manual-gc",
      "--profile",
      "--use-pytorch-profiler",
      "--record-memory-history",
      "--rerun-",
      "--check-for-nan",
      "--bias-",
      "--no-rope-fusion",
      "--apply-layernorm-1p",
      "--hysteresis",
      "--loss-scale",
      "--initial-loss-scale",
      "--min-loss-scale",
      "--use-cpu-initialization",
  };
  for (const char* p : prefixes) {
    if (name.rfind(p, 0) == 0) {
      *why = "does not change the step's time or memory in trident";
      return true;
    }
  }
  return false;
}

}  // namespace trident::megatron
