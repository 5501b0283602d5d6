// The `plan` and plan.stack sections of the settings table (config/settings_rows.h): the
// parallel sizes, batch, schedule, recompute, optimizer, placement and precision rows here, the
// rows from expert parallelism on in settings_plan_moe.cc.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "config/limits.h"
#include "config/settings_rows.h"
#include "config/stack.h"

namespace trident {
namespace {

// A time in seconds as the settings table writes a default ("31 us").
std::string microseconds_text(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g us", seconds * 1e6);
  return buf;
}

// Returns the rows of `plan`, in table order.
std::vector<Setting> plan_rows() {
  using K = SettingKind;
  std::vector<Setting> rows = {
      mg(def(integer("tensor_parallel", 1, limits::kMaxGpus,
                     "Tensor-parallel size t: each layer's matrices split over t GPUs."),
             "1"),
         "--tensor-model-parallel-size"),
      mg(def(integer("pipeline_parallel", 1, limits::kMaxGpus,
                     "Pipeline-parallel size p: the layers split into p stages."),
             "1"),
         "--pipeline-model-parallel-size"),
      mg(def(integer("context_parallel", 1, limits::kMaxGpus,
                     "Context-parallel size cp: each sequence split over cp GPUs "
                     "(2 × cp chunks for causal load balance); attention passes keys "
                     "and values between them."),
             "1"),
         "--context-parallel-size"),
      mg(def(choice("cp_comm_type", {"p2p", "all_gather", "a2a"},
                    "Context-parallel attention: p2p passes K/V blocks around the CP ring, "
                    "each transfer overlapped with an attention block (Transformer "
                    "Engine's AttnFuncWithCPAndKVP2P); all_gather gathers K/V before "
                    "attention (AttnFuncWithCPAndKVAllGather; under cp_implementation "
                    "torch, torchtitan's rotate method allgather); a2a exchanges Q, K, V "
                    "and the output all-to-all so each rank attends the whole sequence "
                    "for heads / cp (AttnFuncWithCPAndQKVOA2A, DeepSpeed-Ulysses)."),
             "p2p"),
         "--cp-comm-type"),
      derived(choice("cp_implementation", {"transformer_engine", "torch"},
                     "Whose context-parallel attention runs: transformer_engine "
                     "(Megatron-Core), or torch, PyTorch's context_parallel as torchtitan "
                     "calls it (fp32 merges of the partial outputs, fp32 dK/dV, K/V with "
                     "every query head: torchtitan repeats K/V heads before SDPA); "
                     "docs/context-parallel.md."),
              "the stack's context_parallel (torch under torchtitan)"),
      derived(integer("data_parallel", 1, limits::kMaxGpus, "Data-parallel size d."),
              "cluster GPUs / (tensor_parallel × context_parallel × pipeline_parallel)"),
      mg(req(integer("micro_batch_size", 1, limits::kMaxMicroBatchSize,
                     "Sequences per micro-batch.")),
         "--micro-batch-size"),
      mg(derived(integer("global_batch_size", 1, limits::kMaxGlobalBatchSize,
                         "Sequences per step; give this or num_microbatches (a --set or "
                         "overrides: entry of either replaces the other)."),
                 "num_microbatches × micro_batch_size × data_parallel"),
         "--global-batch-size"),
      derived(integer("num_microbatches", 1, limits::kMaxMicrobatches,
                      "Micro-batches per pipeline per step; give this or "
                      "global_batch_size."),
              "global_batch_size / (micro_batch_size × data_parallel)"),
      derived(choice("schedule", {"gpipe", "1f1b", "interleaved-1f1b"}, "Pipeline schedule."),
              "interleaved-1f1b when virtual_stages > 1, else 1f1b"),
      mg(def(integer("virtual_stages", 1, limits::kMaxVirtualStages,
                     "Model chunks per GPU (interleaved-1f1b)."),
             "1"),
         "--num-virtual-stages-per-pipeline-rank"),
      mg(integer("num_layers_per_virtual_pipeline_stage", 1, limits::kMaxLayers,
                 "Layers per model chunk: sets virtual_stages = num_layers / "
                 "(pipeline_parallel × this); give one of the two."),
         "--num-layers-per-virtual-pipeline-stage"),
      mg(def(boolean("sequence_parallel",
                     "Split layer norm and dropout over the TP group (reduce-scatter + "
                     "all-gather instead of all-reduce)."),
             "false"),
         "--sequence-parallel"),
      mg(def(choice("recompute", {"none", "selective", "full"},
                    "Activation recomputation (Korthikanti et al. 2022)."),
             "none"),
         "--recompute-granularity"),
      mg(def(row("recompute_modules", K::kList,
                 "With recompute selective: the modules whose saved activations are freed "
                 "and whose forward reruns in backward (Megatron-Core "
                 "TransformerConfig.recompute_modules): core_attn (the attention core), "
                 "moe_act (the experts' activation function; needs moe_grouped_gemm), "
                 "layernorm (the norms before attention and the MLP that are kernels of "
                 "their own), mla_up_proj (multi-latent attention's up-projections and "
                 "RoPE), mlp (dense MLPs), moe (the whole MoE MLP, dispatch and combine "
                 "included), shared_experts (not with moe_shared_expert_overlap)."),
             "[core_attn]"),
         "--recompute-modules"),
      mg(derived(boolean("distributed_optimizer",
                         "ZeRO-1: optimizer state sharded over data parallelism "
                         "(reduce-scatter gradients, all-gather weights); the same as "
                         "data_parallel_sharding_strategy optim."),
                 "true unless data_parallel_sharding_strategy is no_shard"),
         "--use-distributed-optimizer"),
      mg(derived(choice("data_parallel_sharding_strategy",
                        {"no_shard", "optim", "optim_grads", "optim_grads_params"},
                        "What data parallelism shards over its ranks: nothing, the "
                        "optimizer state (ZeRO-1, the distributed optimizer), the "
                        "gradients too (ZeRO-2: reduce-scattered every micro-batch), or the "
                        "weights too (ZeRO-3 / FSDP: all-gathered per layer before forward "
                        "and backward)."),
                 "optim when distributed_optimizer is true, else no_shard"),
         "--data-parallel-sharding-strategy"),
      // Megatron-Core FSDP (megatron/core/distributed/fsdp/; arguments.py
      // --use-megatron-fsdp, formerly --use-custom-fsdp): what it shards is the strategy
      // above, optim_grads_params unless given.
      [] {
        Setting s = mg(derived(boolean("fsdp",
                                       "Megatron-Core FSDP: true sets "
                                       "data_parallel_sharding_strategy optim_grads_params "
                                       "unless the strategy is given; false refuses "
                                       "optim_grads_params (Megatron's DDP and distributed "
                                       "optimizer do not shard the weights)."),
                               "true when data_parallel_sharding_strategy is "
                               "optim_grads_params"),
                       "--use-megatron-fsdp");
        s.aliases.push_back("use_custom_fsdp");
        return s;
      }(),
      mg(def(boolean("overlap_grad_reduce",
                     "Reduce gradient buckets during the last micro-batch's backward."),
             "false"),
         "--overlap-grad-reduce"),
      mg(def(boolean("overlap_param_gather",
                     "Distributed optimizer: all-gather the updated weights bucket by "
                     "bucket behind the next step's forward (each layer waits only for "
                     "its bucket)."),
             "false"),
         "--overlap-param-gather"),
      mg(def(integer("num_distributed_optimizer_instances", 1, limits::kMaxGpus,
                     "Distributed optimizer: copies of it across the data-parallel group, each "
                     "sharded over d cp / N consecutive ranks; gradients are reduce-scattered "
                     "inside a copy, then all-reduced across copies, weights gathered inside a "
                     "copy (hierarchical data parallelism: one copy per site, "
                     "docs/fabrics.md)."),
             "1"),
         "--num-distributed-optimizer-instances"),
      mg(def(boolean("grad_reduce_in_bf16",
                     "Reduce gradients in bf16 (half the bytes of fp32; the gradient "
                     "buffer is bf16, the optimizer's main gradients stay fp32)."),
             "false"),
         "--grad-reduce-in-bf16"),
      mg(def(boolean("use_precision_aware_optimizer",
                     "Transformer Engine's FusedAdam keeps the optimizer state in the dtypes "
                     "below (Megatron-Core's precision-aware optimizer)."),
             "false"),
         "--use-precision-aware-optimizer"),
      def(boolean("store_param_remainders",
                  "Precision-aware optimizer with an fp32 master and bf16 parameters: keep "
                  "only the master's 16 low bits (2 B per parameter, not 4; Megatron-Core "
                  "OptimizerConfig.store_param_remainders)."),
          "true"),
      mg(def(choice("main_params_dtype", {"fp32", "fp16"},
                    "Dtype of the optimizer's master weights (not fp32: needs "
                    "use_precision_aware_optimizer)."),
             "fp32"),
         "--main-params-dtype"),
      mg(def(choice("main_grads_dtype", {"fp32", "bf16"},
                    "Dtype of the gradients the optimizer steps on; bf16 with "
                    "grad_reduce_in_bf16 keeps no fp32 copy (needs "
                    "use_precision_aware_optimizer)."),
             "fp32"),
         "--main-grads-dtype"),
      mg(def(choice("exp_avg_dtype", {"fp32", "fp16", "bf16", "fp8"},
                    "Dtype of Adam's first moment (not fp32: needs "
                    "use_precision_aware_optimizer)."),
             "fp32"),
         "--exp-avg-dtype"),
      mg(def(choice("exp_avg_sq_dtype", {"fp32", "fp16", "bf16", "fp8"},
                    "Dtype of Adam's second moment (not fp32: needs "
                    "use_precision_aware_optimizer)."),
             "fp32"),
         "--exp-avg-sq-dtype"),
      // optimizer_offload: the name some recipes' tables give it.
      alias(mg(def(boolean("optimizer_cpu_offload",
                           "Megatron-Core's hybrid device optimizer: optimizer_offload_fraction of "
                           "the optimizer step (fp32 master weights, Adam moments, gradients) on "
                           "the host CPU (needs use_precision_aware_optimizer, the distributed "
                           "optimizer and cluster.host)."),
                   "false"),
               "--optimizer-cpu-offload"),
            "optimizer_offload"),
      mg(def(number("optimizer_offload_fraction", 0, 1,
                    "Fraction of each GPU's optimizer shard stepped on the host."),
             "1"),
         "--optimizer-offload-fraction"),
      mg(def(boolean("overlap_cpu_optimizer_d2h_h2d",
                     "Offload: one CPU optimizer per parameter, its gradient copy (D2H), "
                     "CPU step and weight copy (H2D) pipelined on their own streams; "
                     "otherwise all gradients, then one CPU step, then all weights."),
             "false"),
         "--overlap-cpu-optimizer-d2h-h2d"),
      mg(def(boolean("tp_comm_overlap",
                     "Sequence parallelism: split each TP all-gather and reduce-scatter "
                     "into chunks overlapped with its GEMM (Transformer Engine "
                     "userbuffers); needs sequence_parallel and tensor_parallel > 1."),
             "false"),
         "--tp-comm-overlap"),
      def(integer("gpus_per_island", 0, limits::kMaxIslandSize,
                  "GPUs the plan uses in each NVLink island, the first ones (e.g. 64 of an "
                  "NVL72 rack's 72, as block-topology schedulers hand them out); ranks skip "
                  "the others. 0: every GPU."),
          "0"),
      def(row("placement", K::kList,
              "Rank order, fastest-varying first: a list of tensor, context, data and "
              "pipeline, each once (Megatron-Core's order tp-cp-dp-pp). Tensor first "
              "keeps TP groups inside an NVLink island; a list without context puts it "
              "right after tensor."),
          "[tensor, context, data, pipeline]"),
      mg(def(choice("precision", {"bf16", "fp16", "fp8", "tf32", "fp32", "fp4"},
                    "Datatype of the GEMMs (and the peak they run at); fp4 runs the linear "
                    "layers in NVFP4 (fp4_recipe), needs Blackwell."),
             "bf16"),
         "--bf16 / --fp16 / --fp4-format"),
      row("pipeline_layers", K::kList,
          "Layers per virtual stage in model order, one entry for each of "
          "pipeline_parallel × virtual_stages; absent: an even split."),
      mg(integer("decoder_first_pipeline_num_layers", 1, limits::kMaxLayers,
                 "Layers of the first pipeline stage (the rest split evenly)."),
         "--decoder-first-pipeline-num-layers"),
      mg(integer("decoder_last_pipeline_num_layers", 1, limits::kMaxLayers,
                 "Layers of the last pipeline stage (the rest split evenly)."),
         "--decoder-last-pipeline-num-layers"),
      mg(row("pipeline_model_parallel_layout", K::kString,
             "Megatron-Core's flexible layout: virtual stages separated by |, each a string "
             "of E (embedding, first), t (one decoder layer) and L (loss, last), with "
             "(...)*N and t*N repeats, e.g. Et|(tt|)*30L; virtual_stages follows "
             "(stages / pipeline_parallel) and stages may be empty."),
         "--pipeline-model-parallel-layout"),
      mg(def(boolean("account_for_embedding_in_pipeline_split",
                     "The embedding takes one layer's slot in the even split: the first "
                     "virtual stage gets one decoder layer fewer."),
             "false"),
         "--account-for-embedding-in-pipeline-split"),
      mg(def(boolean("account_for_loss_in_pipeline_split",
                     "The loss (output layer) takes one layer's slot in the even split: the "
                     "last virtual stage gets one decoder layer fewer."),
             "false"),
         "--account-for-loss-in-pipeline-split"),
      mg(derived(integer("grad_bucket_size", 1, limits::kMaxGradBucketSize,
                         "Parameters per gradient bucket (overlap_grad_reduce)."),
                 "max(40M, 1M × data_parallel)"),
         "--ddp-bucket-size"),
      mg(def(choice("attention_backend", {"auto", "flash", "fused", "unfused", "flash2"},
                    "Attention kernels: flash (FlashAttention) and fused (cuDNN) are one "
                    "kernel per pass with no s×s tensor; unfused is 2020-22 Megatron "
                    "(QKᵀ, softmax, dropout through HBM); flash2 is FlashAttention-2 as "
                    "PyTorch SDPA runs it; auto: the stack's pick (Megatron-Core: fused on "
                    "Hopper and Blackwell, flash on Ampere, unfused when the GPU's "
                    "architecture is unspecified; stack attention sdpa: flash2)."),
             "auto"),
         "--attention-backend"),
      derived(row("stack", K::kMap,
                  "The software stack that runs the plan: a profile in the library's "
                  "stacks/ folder (megatron-core, torchtitan, torchtitan-compile), a path, "
                  "or an inline map (section `plan.stack`, docs/stacks.md)."),
              "megatron-core (Megatron-Core with Transformer Engine)"),
      mg(def(choice("fp8_recipe", {"delayed", "tensorwise", "blockwise", "mxfp8"},
                    "FP8 scaling recipe with precision fp8 (Transformer Engine); mxfp8 "
                    "needs Blackwell."),
             "delayed"),
         "--fp8-recipe"),
      mg(def(boolean("fp8_attention",
                     "Attention in FP8 too (precision fp8); otherwise it runs in BF16."),
             "false"),
         "--fp8-dot-product-attention"),
      mg(def(choice("fp4_recipe", {"nvfp4"},
                    "FP4 recipe with precision fp4: Transformer Engine's NVFP4BlockScaling "
                    "(E2M1 in 16-element blocks with E4M3 scales and an FP32 tensor scale; "
                    "16x16 weight blocks, random Hadamard transforms on the weight-gradient "
                    "inputs, stochastic rounding of gradients); attention stays BF16."),
             "nvfp4"),
         "--fp4-recipe"),
      mg(def(boolean("first_last_layers_bf16",
                     "Precision fp8 or fp4: the first num_layers_at_start_in_bf16 and last "
                     "num_layers_at_end_in_bf16 transformer layers run in BF16."),
             "false"),
         "--first-last-layers-bf16"),
      mg(def(integer("num_layers_at_start_in_bf16", 0, limits::kMaxLayers,
                     "Layers kept in BF16 at the start (first_last_layers_bf16)."),
             "1"),
         "--num-layers-at-start-in-bf16"),
      mg(def(integer("num_layers_at_end_in_bf16", 0, limits::kMaxLayers,
                     "Layers kept in BF16 at the end (first_last_layers_bf16)."),
             "1"),
         "--num-layers-at-end-in-bf16"),
      mg(def(boolean("fp8_param_gather",
                     "Precision fp8: the weights live only in FP8 (no 16-bit copy) and the "
                     "distributed optimizer all-gathers them in FP8."),
             "false"),
         "--fp8-param-gather"),
  };
  for (Setting& s : plan_moe_rows()) rows.push_back(std::move(s));
  return rows;
}

}  // namespace

void append_plan_sections(std::vector<SettingSection>* out) {
  using D = Dimension;
  using K = SettingKind;
  out->push_back({"plan",
                  "The parallel plan: tensor × pipeline × data parallel GPUs, batch, schedule and "
                  "Megatron-LM's memory and overlap options.",
                  plan_rows()});
  // A software stack's profile (config/stack.h, docs/stacks.md; configs/stacks/ sources each
  // value). The defaults are Megatron-Core with Transformer Engine.
  out->push_back(
      {"plan.stack",
       "How a software stack turns the model and plan into kernels and collectives "
       "(docs/stacks.md).",
       {
           req(row("name", K::kString, "Stack name, shown in reports.")),
           row("description", K::kString, "Free text for people: versions, sources."),
           def(choice("elementwise", {"fused", "eager"},
                      "Norms, rotary embeddings, the SwiGLU gate and residual adds: one fused "
                      "kernel each (Transformer Engine, torch.compile), or every PyTorch op its "
                      "own kernel and HBM pass (eager)."),
               "fused"),
           def(choice("attention", {"te", "sdpa"},
                      "The kernel attention_backend auto picks: te (cuDNN fused attention on "
                      "Hopper and Blackwell, FlashAttention-2 on Ampere) or sdpa (PyTorch "
                      "scaled_dot_product_attention: FlashAttention-2, `flash2`)."),
               "te"),
           def(quantity("host_time_per_kernel", D::kTime, 0, limits::kMaxLatency,
                        "CPU time to launch one kernel (eager PyTorch dispatch); the GPU waits "
                        "when the host falls behind its queue (docs/host-launch.md). 0: never "
                        "host-bound. The default is Megatron-Core's, fitted "
                        "(docs/calibration.md)."),
               microseconds_text(kMegatronCoreHostTimePerKernel)),
           def(boolean("tp_grad_overlap",
                       "The input-gradient TP collective runs beside the weight-gradient GEMM "
                       "(Megatron's backward); false: it is exposed."),
               "true"),
           def(choice("selective_recompute", {"attention_core", "alternate_matmuls"},
                      "What recompute selective recomputes: the attention core (Megatron) or "
                      "every other matmul and all element-wise ops (torchtitan's op policy)."),
               "attention_core"),
           def(choice("context_parallel", {"transformer_engine", "torch"},
                      "Whose context-parallel attention the stack calls: Transformer Engine's "
                      "(Megatron-Core) or PyTorch's context_parallel (torchtitan); the default "
                      "of plan.cp_implementation."),
               "transformer_engine"),
       }});
}

}  // namespace trident
