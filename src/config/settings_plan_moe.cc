// The rows of the `plan` section from expert parallelism on (config/settings_rows.h): MoE
// (Megatron-Core's expert parallelism and token dispatch), CUDA graphs, activation offload and
// the cost of a training run.
#include "config/limits.h"
#include "config/settings_rows.h"

namespace trident {

std::vector<Setting> plan_moe_rows() {
  using K = SettingKind;
  return {
      // Mixture of experts (Megatron-Core megatron/core/parallel_state.py and
      // megatron/core/transformer/moe/); used only when the model has experts.
      mg(def(integer("expert_model_parallel_size", 1, limits::kMaxGpus,
                     "Expert-parallel size EP: each MoE layer's experts split over EP GPUs "
                     "of a pipeline stage, folded over its tensor, context and data ranks "
                     "(expert-data-parallel = t cp d / (EP ETP))."),
             "1"),
         "--expert-model-parallel-size"),
      mg(derived(integer("expert_tensor_parallel_size", 1, limits::kMaxGpus,
                         "Tensor-parallel size of the experts (ETP): t (split like the "
                         "dense layers) or 1 (whole experts; alltoall dispatcher)."),
                 "tensor_parallel"),
         "--expert-tensor-parallel-size"),
      mg(def(choice("moe_token_dispatcher_type", {"allgather", "alltoall", "flex"},
                    "How routed tokens reach their experts: all-to-all over the EP group "
                    "(dispatch and combine), all-gather of every token and a "
                    "reduce-scatter of the outputs, or flex (DeepEP: each token once per "
                    "destination GPU, once per node over RDMA; docs/moe.md)."),
             "allgather"),
         "--moe-token-dispatcher-type"),
      mg(number("moe_expert_capacity_factor", 0.01, 1000,
                "Tokens an expert takes, as a multiple of the balanced share; beyond, "
                "tokens are dropped. Absent: dropless."),
         "--moe-expert-capacity-factor"),
      mg(def(boolean("moe_pad_expert_input_to_capacity",
                     "With a capacity factor, every expert runs its full capacity (padded)."),
             "false"),
         "--moe-pad-expert-input-to-capacity"),
      def(number("moe_expert_load_imbalance", 1, 1000,
                 "Routing imbalance: the busiest expert's tokens / the mean (1: balanced). "
                 "The busiest rank sets the pace of each MoE layer (capped by the "
                 "capacity factor)."),
          "1"),
      mg(def(boolean("moe_shared_expert_overlap",
                     "Run the shared expert during the dispatch and combine all-to-alls."),
             "false"),
         "--moe-shared-expert-overlap"),
      mg(def(choice("moe_flex_dispatcher_backend", {"deepep", "hybridep"},
                    "The flex dispatcher's kernels: DeepEP's normal kernels or HybridEP "
                    "(NVLink-domain-wide dispatch on NVL72). trident lowers both the same "
                    "way, with the NVLink island as the domain inside which a token is "
                    "sent to each destination GPU (docs/moe.md, \"The flex dispatcher\")."),
             "deepep"),
         "--moe-flex-dispatcher-backend"),
      mg(def(boolean("moe_grouped_gemm",
                     "The local experts' GEMMs as one grouped GEMM (Transformer Engine "
                     "GroupedLinear); false: one GEMM per local expert, one after the "
                     "other (Megatron-Core SequentialMLP). Megatron's default is false; "
                     "trident's true, as every MoE recipe sets it."),
             "true"),
         "--moe-grouped-gemm"),
      mg(def(boolean("moe_router_force_load_balancing",
                     "Benchmark routing from random logits (Megatron-Core, experimental): "
                     "balanced, the same as moe_expert_load_imbalance 1, which it requires."),
             "false"),
         "--moe-router-force-load-balancing"),
      derived(integer("expert_data_parallel", 1, limits::kMaxGpus,
                      "The expert-data-parallel size as a recipe states it; checked, not "
                      "set: it must equal tensor × context × data / (expert_model_parallel "
                      "× expert_tensor_parallel)."),
              "t × cp × d / (EP × ETP)"),
      derived(integer("gradient_accumulation", 1, limits::kMaxMicrobatches,
                      "Gradient-accumulation steps as a recipe states them; checked, not "
                      "set: it must equal num_microbatches."),
              "num_microbatches"),
      mg(def(boolean("overlap_p2p_comm",
                     "Interleaved 1F1B: pipeline sends and receives run beside the next "
                     "chunk's compute (Megatron's default; trident's pipeline sends never "
                     "hold the sender). false with virtual_stages > 1 is refused (not "
                     "modelled); Megatron forces false without interleaving, which trident "
                     "accepts."),
             "true"),
         "--no-overlap-p2p-communication (negated)"),
      mg(def(boolean("overlap_moe_expert_parallel_comm",
                     "Megatron-Core's combined 1F1B: in the steady state one micro-batch's "
                     "forward and another's backward run as one step, layer by layer, each "
                     "one's dispatch and combine all-to-alls beside the other's compute. "
                     "Needs expert_model_parallel_size > 1, the alltoall or flex dispatcher, "
                     "no full recompute and, with pipelining, interleaved-1f1b (one more "
                     "warm-up forward per stage, so one more micro-batch in flight)."),
             "false"),
         "--overlap-moe-expert-parallel-comm"),
      mg(number("moe_expert_rank_capacity_factor", 1, 1000,
                "HybridEP's static receive budget per EP rank, as a multiple of the "
                "balanced share (flex dispatcher, hybridep backend): the dispatch sizes "
                "its output without asking the host, so the forward has no host-device "
                "sync (docs/host-launch.md). Absent: none."),
         "--moe-expert-rank-capacity-factor"),
      mg(def(boolean("moe_paged_stash",
                     "Stash MoE activations in fixed-size pages (Megatron-Core paged "
                     "stash; needs hybridep and moe_expert_rank_capacity_factor). trident "
                     "already keeps the routed tokens' activations at their real count, so "
                     "it changes no memory figure; it makes the step sync-free."),
             "false"),
         "--moe-paged-stash"),
      mg(def(choice("cuda_graph_impl", {"none", "local", "transformer_engine"},
                    "Who captures CUDA graphs (Megatron-Core --cuda-graph-impl): kernels "
                    "inside a graph are replayed without the host launching each one "
                    "(plan.stack.host_time_per_kernel; docs/host-launch.md)."),
             "none"),
         "--cuda-graph-impl"),
      mg(def(row("cuda_graph_scope", K::kList,
                 "With cuda_graph_impl: the parts of each layer captured, forward and "
                 "backward (Megatron-Core --cuda-graph-scope): attn (norm, attention, "
                 "residual), mlp (a dense MLP), moe (a MoE MLP; needs "
                 "moe_pad_expert_input_to_capacity), moe_router (pre-MLP norm, router), "
                 "moe_preprocess (the permutation metadata; needs moe_router), "
                 "full_iteration (the whole step; with MoE a sync-free dispatch). Empty: "
                 "every part the layer has (attn and mlp, or attn, moe_router and "
                 "moe_preprocess)."),
             "[]"),
         "--cuda-graph-scope"),
      def(row("activation_offload", K::kList,
              "Megatron-Core fine-grained activation offloading (offload_modules): the "
              "saved inputs of these modules go to host memory after their forward and "
              "come back for their backward, over cluster.host's links beside the "
              "compute (needs them). Modelled: expert_fc1, moe_act (MoE layers); "
              "Megatron's other modules are refused by name."),
          "[]"),
      number("train_tokens", 1, 1e18,
             "Tokens of the whole training run: the report adds days of training and "
             "GPU-hours (a plain number, 15e12; trident's --train-tokens takes 15T)."),
      number("gpu_hour_price", 0, 1e9,
             "Price of one GPU-hour, any currency: with train_tokens the report adds "
             "the cost (trident's --gpu-hour-price)."),
  };
}

}  // namespace trident
