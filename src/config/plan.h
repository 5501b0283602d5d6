// Typed, validated 3D-parallel plan (docs/schema.md, `plan`).
#ifndef TRIDENT_CONFIG_PLAN_H_
#define TRIDENT_CONFIG_PLAN_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "config/cluster.h"
#include "config/stack.h"

namespace trident {

enum class ScheduleKind { kGpipe, k1F1B, kInterleaved1F1B };
enum class Recompute { kNone, kSelective, kFull };
enum class ParallelDim { kTensor, kData, kPipeline, kContext };
// Megatron-Core --cp-comm-type: how context-parallel attention exchanges keys and values
// (Transformer Engine, transformer_engine/pytorch/attention/dot_product_attention/
// context_parallel.py). kP2p: K/V blocks passed around the CP ring, each send/recv overlapped
// with the attention block before it (AttnFuncWithCPAndKVP2P). kAllGather: K/V all-gathered
// before attention (AttnFuncWithCPAndKVAllGather). kA2a: all-to-all of Q, K, V over the CP
// group so each rank holds the whole sequence for heads / cp (AttnFuncWithCPAndQKVOA2A,
// DeepSpeed-Ulysses).
enum class CpCommType { kP2p, kAllGather, kA2a };
// Whose context-parallel attention runs. kTransformerEngine: Megatron-Core's (above).
// kTorch: PyTorch's context_parallel (torch/distributed/tensor/experimental/_attention.py), as
// torchtitan calls it: the same causal load balance, K/V rotated by an all-gather (cp_comm_type
// all_gather, torchtitan's context_parallel_rotate_method allgather) or passed one hop per step
// (p2p, its alltoall), partial outputs merged in fp32 and dK/dV passed on in fp32 (workload/
// cp_attention.h).
// Megatron-Core --attention-backend. kUnfused: QK^T, softmax, dropout and attention over V as
// separate kernels with the s x s scores in HBM (Megatron 2020-22). kFlash / kFused: one
// FlashAttention / cuDNN kernel per pass. kAuto: what Megatron-Core with Transformer Engine
// picks on the GPU (resolve_attention_backend).
// kFlash2: FlashAttention-2 as PyTorch's scaled_dot_product_attention runs it (torchtitan),
// whatever the GPU (kFlash is FA3 on Hopper and FA4 on Blackwell).
enum class AttentionBackend { kAuto, kFlash, kFused, kUnfused, kFlash2 };
// Megatron --fp8-recipe: delayed (per-tensor scale from an amax history), tensorwise (current
// per-tensor scaling), blockwise (1x128 / 128x128 blocks), mxfp8 (32-element blocks with
// E8M0 scales; Blackwell only).
enum class Fp8Recipe { kDelayed, kTensorwise, kBlockwise, kMxfp8 };
// Megatron --fp4-recipe: nvfp4 (Transformer Engine's NVFP4BlockScaling; Blackwell only).
enum class Fp4Recipe { kNvfp4 };
// Megatron-Core's data_parallel_sharding_strategy (megatron/core/distributed/
// distributed_data_parallel_config.py): what data parallelism shards over its d ranks. kOptim is
// the distributed optimizer (ZeRO-1); kOptimGrads adds the gradients (ZeRO-2); kOptimGradsParams
// the weights too (ZeRO-3, Megatron-Core FSDP).
enum class DpSharding { kNoShard, kOptim, kOptimGrads, kOptimGradsParams };
// Megatron-Core's precision-aware optimizer (--use-precision-aware-optimizer, Transformer
// Engine's FusedAdam): the dtype of its master weights, main gradients and Adam moments.
enum class StateDtype { kFp32, kFp16, kBf16, kFp8 };
// Megatron-Core --moe-token-dispatcher-type (megatron/core/transformer/moe/token_dispatcher.py).
enum class MoeDispatcher { kAllGather, kAllToAll, kFlex };
// Megatron-Core --moe-flex-dispatcher-backend (transformer_config.py): DeepEP's normal kernels or
// HybridEP; trident lowers both alike (lowering/flex_dispatch.h, docs/moe.md).
enum class MoeFlexBackend { kDeepEp, kHybridEp };
// Megatron-Core --recompute-modules under --recompute-granularity selective
// (TransformerConfig.recompute_modules; transformer_layer.py, mlp.py, moe/experts.py,
// moe/moe_layer.py, multi_latent_attention.py): bits of PlanSpec::recompute_modules.
enum RecomputeModule : unsigned {
  kRecomputeCoreAttn = 1u << 0,       // the attention core (Korthikanti's selective)
  kRecomputeMoeAct = 1u << 1,         // the routed experts' activation function
  kRecomputeLayernorm = 1u << 2,      // the norms that are kernels of their own
  kRecomputeMlaUpProj = 1u << 3,      // MLA's up-projections and RoPE
  kRecomputeMlp = 1u << 4,            // a dense MLP
  kRecomputeMoe = 1u << 5,            // a whole MoE MLP, dispatch and combine included
  kRecomputeSharedExperts = 1u << 6,  // the shared expert
};
// Returns the bit of Megatron's module `name`, or 0 for an unknown one.
unsigned parse_recompute_module(const std::string& name);
// Megatron-Core fine-grained activation offloading (TransformerConfig.offload_modules) that
// trident models: bits of PlanSpec::activation_offload.
enum ActivationOffload : unsigned {
  kOffloadExpertFc1 = 1u << 0,  // the routed experts' FC1 input
  kOffloadMoeAct = 1u << 1,     // the routed experts' activation input (the FC1 output)
};
// Returns the bit of Megatron's offload module `name`, or 0 for one trident does not model.
unsigned parse_activation_offload(const std::string& name);
// Megatron-Core --cuda-graph-impl (megatron/core/transformer/cuda_graph_config.py): who
// captures the graphs; kNone runs every kernel eagerly.
enum class CudaGraphImpl { kNone, kLocal, kTransformerEngine };
// Megatron-Core --cuda-graph-scope (--cuda-graph-modules; megatron/core/transformer/enums.py
// CudaGraphScope, docs/user-guide/features/cuda_graph.md): the parts of a layer whose kernels
// are replayed from a graph, forward and backward: bits of PlanSpec::cuda_graph_scope. An
// op's own bit (Op::graph_module) says which part it belongs to.
enum CudaGraphModule : unsigned {
  kGraphAttn = 1u << 0,           // input norm, self-attention, its bias-dropout-add
  kGraphMlp = 1u << 1,            // a dense layer's pre-MLP norm, MLP and bias-dropout-add
  kGraphMoe = 1u << 2,            // a MoE layer's whole MLP (drop-and-pad only)
  kGraphMoeRouter = 1u << 3,      // pre-MLP norm, router (and a shared expert not overlapped)
  kGraphMoePreprocess = 1u << 4,  // MoELayer.preprocess: the permutation's metadata
  kGraphFullIteration = 1u << 5,  // the whole forward-backward step (no eager kernel)
};
// Returns the bit of a --cuda-graph-scope value, or 0 for one trident does not model.
unsigned parse_cuda_graph_module(const std::string& name);

const char* schedule_name(ScheduleKind s);
bool parse_schedule(const std::string& name, ScheduleKind* out);
const char* recompute_name(Recompute r);
bool parse_recompute(const std::string& name, Recompute* out);
const char* parallel_dim_name(ParallelDim d);
bool parse_parallel_dim(const std::string& name, ParallelDim* out);
// Returns `placement` with context inserted right after tensor when it is missing (a
// 3-entry placement of tensor, data and pipeline), else `placement` itself.
std::vector<ParallelDim> full_placement(const std::vector<ParallelDim>& placement);
const char* cp_comm_type_name(CpCommType c);
bool parse_cp_comm_type(const std::string& name, CpCommType* out);
const char* cp_implementation_name(CpImplementation c);
bool parse_cp_implementation(const std::string& name, CpImplementation* out);
const char* attention_backend_name(AttentionBackend b);
bool parse_attention_backend(const std::string& name, AttentionBackend* out);
const char* fp8_recipe_name(Fp8Recipe r);
bool parse_fp8_recipe(const std::string& name, Fp8Recipe* out);
const char* dp_sharding_name(DpSharding s);
bool parse_dp_sharding(const std::string& name, DpSharding* out);
const char* state_dtype_name(StateDtype d);
bool parse_state_dtype(const std::string& name, StateDtype* out);
// Returns the bytes of one element of `d` (4, 2, 2, 1).
double state_dtype_bytes(StateDtype d);
// Returns the backend `auto` stands for on `arch`: fused (cuDNN) on Hopper and Blackwell, where
// Transformer Engine prefers cuDNN fused attention; flash on Ampere, where it prefers
// FlashAttention-2; unfused on a GPU file that declares no architecture (trident's model
// before fused attention). Other backends are returned as they are.
AttentionBackend resolve_attention_backend(AttentionBackend b, GpuArchitecture arch);

struct PlanSpec {
  int tensor = 1;
  int pipeline = 1;
  int context = 1;  // context-parallel size cp: each rank holds seq_length / cp tokens
  int data = 1;     // resolved: default gpus / (tensor * context * pipeline)
  int micro_batch_size = 1;
  int global_batch_size = 0;  // resolved: = num_microbatches * micro_batch_size * data
  int num_microbatches = 0;   // per pipeline; resolved from global_batch_size if not given
  ScheduleKind schedule = ScheduleKind::k1F1B;
  int virtual_stages = 1;
  bool sequence_parallel = false;
  Recompute recompute = Recompute::kNone;
  // With recompute selective: RecomputeModule bits (Megatron's default, core_attn).
  unsigned recompute_modules = kRecomputeCoreAttn;
  // Derived from dp_sharding: true unless kNoShard (Megatron's --use-distributed-optimizer).
  bool distributed_optimizer = false;
  DpSharding dp_sharding = DpSharding::kNoShard;
  bool overlap_grad_reduce = false;
  // Distributed optimizer: the next step's parameter all-gather overlapped with the forward,
  // bucket by bucket (--overlap-param-gather).
  bool overlap_param_gather = false;
  // Megatron-Core's num_distributed_optimizer_instances: the dp-cp group splits into this many
  // consecutive slices, each a copy of the distributed optimizer (optimizer_shards()).
  int distributed_optimizer_instances = 1;
  // Gradients reduced in bf16 instead of fp32 (--grad-reduce-in-bf16).
  bool grad_reduce_in_bf16 = false;
  // The optimizer's state dtypes (precision_aware_optimizer; fp32 without it): master
  // weights, main gradients, first and second Adam moments.
  bool precision_aware_optimizer = false;
  // With the precision-aware optimizer and an fp32 master: keep only the 16 bits of the master
  // that the bf16 parameter lacks (Megatron-Core's store_param_remainders).
  bool store_param_remainders = true;
  StateDtype main_params_dtype = StateDtype::kFp32;
  StateDtype main_grads_dtype = StateDtype::kFp32;
  StateDtype exp_avg_dtype = StateDtype::kFp32;
  StateDtype exp_avg_sq_dtype = StateDtype::kFp32;
  // Sequence parallelism: each TP all-gather / reduce-scatter split into chunks overlapped
  // with its GEMM, as Transformer Engine's userbuffers run them (--tp-comm-overlap).
  bool tp_comm_overlap = false;
  CpCommType cp_comm_type = CpCommType::kP2p;
  CpImplementation cp_implementation = CpImplementation::kTransformerEngine;
  // Rank order, fastest-varying first (Megatron-Core's RankGenerator order tp-cp-dp-pp).
  // [tensor, context, data, pipeline] keeps a TP group inside a node; a 3-entry placement
  // without context means context right after tensor (full_placement).
  std::vector<ParallelDim> placement{ParallelDim::kTensor, ParallelDim::kContext,
                                     ParallelDim::kData, ParallelDim::kPipeline};
  Precision precision = Precision::kBf16;
  AttentionBackend attention_backend = AttentionBackend::kAuto;
  // precision fp8 only: the scaling recipe, and whether attention runs in FP8 too (otherwise
  // BF16, as Transformer Engine runs it by default).
  Fp8Recipe fp8_recipe = Fp8Recipe::kDelayed;
  bool fp8_attention = false;
  // FP8 primary weights (--fp8-param-gather): no 16-bit copy, gathered in FP8.
  bool fp8_param_gather = false;
  // precision fp4: the recipe (--fp4-recipe; nvfp4 only, workload/nvfp4.h).
  Fp4Recipe fp4_recipe = Fp4Recipe::kNvfp4;
  // precision fp8 or fp4: the first / last layers in BF16 (--first-last-layers-bf16).
  bool first_last_layers_bf16 = false;
  int num_layers_at_start_in_bf16 = 1;
  int num_layers_at_end_in_bf16 = 1;
  // Megatron-Core's HybridDeviceOptimizer (--optimizer-cpu-offload): this fraction of each
  // GPU's optimizer shard steps on the host (workload/optimizer_offload.h), with the copies
  // pipelined per parameter under overlap_cpu_optimizer_d2h_h2d.
  bool optimizer_cpu_offload = false;
  double optimizer_offload_fraction = 1;
  bool overlap_cpu_optimizer_d2h_h2d = false;
  // Layers of each virtual pipeline stage, in model order (chunk c of stage s is virtual stage
  // c * pipeline + s); size pipeline * virtual_stages. Empty: an even split.
  std::vector<int> pipeline_layers;
  // The virtual stage that holds model.mtp_num_layers multi-token-prediction layers: where
  // pipeline_model_parallel_layout's 'm' are, else -1, the last (with the loss, as
  // Megatron-Core's get_mtp_num_layers_to_build places them without a layout).
  int mtp_virtual_stage = -1;
  // Parameters per gradient bucket when overlap_grad_reduce is on; 0: Megatron's default,
  // max(40M, 1M x data_parallel).
  std::int64_t grad_bucket_size = 0;
  // The whole training run, for time to train and cost (0: not given).
  double train_tokens = 0;
  double gpu_hour_price = 0;  // per GPU-hour; meaningful when has_gpu_hour_price
  bool has_gpu_hour_price = false;

  // Mixture of experts (models with num_experts > 0). The expert groups fold a stage's
  // tensor, context and data-parallel ranks (Megatron-Core's expert rank order tp-ep-dp-pp with
  // tp = expert_tensor_parallel_size; layout/expert_ranks.h).
  int expert_parallel = 1;
  int expert_tensor_parallel = 0;  // resolved: = tensor unless set
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllGather;
  double moe_capacity_factor = 0;  // 0: dropless
  bool moe_pad_to_capacity = false;
  double moe_load_imbalance = 1;  // busiest expert's tokens / mean
  bool moe_shared_expert_overlap = false;
  // Megatron-Core's combined 1F1B (pipeline_parallel/combined_1f1b.py): in the steady state a
  // forward and a backward of two micro-batches run as one step, layer by layer, so that one's
  // dispatch and combine all-to-alls run beside the other's compute (layout/program.h).
  bool overlap_moe_expert_parallel_comm = false;
  MoeFlexBackend moe_flex_backend = MoeFlexBackend::kDeepEp;
  // The local experts as one grouped GEMM (TE GroupedLinear); false: one GEMM per expert in
  // turn (Megatron-Core SequentialMLP).
  bool moe_grouped_gemm = true;
  // ActivationOffload bits: module inputs kept in host memory between forward and backward.
  unsigned activation_offload = 0;
  // HybridEP's static per-rank receive budget (--moe-expert-rank-capacity-factor; 0: none):
  // the dispatch sizes its output without asking the host, so no host-device sync.
  double moe_expert_rank_capacity_factor = 0;
  // --moe-paged-stash: MoE activations stashed in fixed pages (needs the rank budget).
  bool moe_paged_stash = false;

  // CUDA graphs: who captures them and which parts of each layer (CudaGraphModule bits; an
  // empty scope with an impl: every part the layer has that can be captured).
  CudaGraphImpl cuda_graph_impl = CudaGraphImpl::kNone;
  unsigned cuda_graph_scope = 0;

  // The software stack that runs the plan (plan.stack; config/stack.h): Megatron-Core with
  // Transformer Engine unless a profile says otherwise.
  StackSpec stack;

  // GPUs used in each NVLink island, the first of each (a block-topology scheduler's
  // allocation: 64 of an NVL72 rack's 72); 0: all.
  int gpus_per_island = 0;

  int gpus() const { return tensor * context * pipeline * data; }
  // Members of Megatron's data-parallel group with context parallelism (the dp-cp group that
  // reduces gradients and shards the distributed optimizer): d * cp.
  int data_context() const { return data * context; }
  // Returns the GPUs one distributed-optimizer copy shards over: d * cp / instances
  // (Megatron-Core's intra_partial_data_parallel_size).
  int optimizer_shards() const { return data_context() / distributed_optimizer_instances; }
  // Gradients sharded over data parallelism (optim_grads, optim_grads_params).
  bool shards_gradients() const { return dp_sharding >= DpSharding::kOptimGrads; }
  // Weights sharded and gathered per layer before use (optim_grads_params).
  bool shards_params() const { return dp_sharding == DpSharding::kOptimGradsParams; }
  // Returns whether selective recomputation reruns module `m` (a RecomputeModule bit).
  bool recomputes(unsigned m) const {
    return recompute == Recompute::kSelective && (recompute_modules & m) != 0;
  }
  // Returns whether transformer layer `layer` (0-based) of a model of `num_layers` runs its
  // linear layers in BF16 under precision fp8 / fp4 (first_last_layers_bf16; Megatron-Core's
  // fp8_utils.py get_fp8_context and fp4_utils.py get_fp4_context, by global layer number).
  bool bf16_layer(int layer, int num_layers) const {
    return first_last_layers_bf16 &&
           (layer < num_layers_at_start_in_bf16 || layer >= num_layers - num_layers_at_end_in_bf16);
  }
  // Returns ETP (expert_tensor_parallel, or t when unresolved).
  int expert_tensor() const { return expert_tensor_parallel > 0 ? expert_tensor_parallel : tensor; }
  // Returns the expert-data-parallel size t cp d / (EP ETP): the group that reduces the expert
  // gradients and shards their optimizer state (Megatron-Core's expert_data_parallel_size).
  int expert_data_parallel() const {
    return tensor * context * data / (expert_parallel * expert_tensor());
  }
  // Returns whether a MoE layer's forward blocks the host until the GPU has caught up before
  // its dispatch (the token counts the dispatch sizes its outputs by go to the host): the
  // alltoall dispatcher's d2h_event.synchronize at its cuda_sync_point and the allgather's
  // .cpu() (megatron/core/transformer/moe/token_dispatcher.py), DeepEP's wait on its receive
  // counter (csrc buffer.hpp) and HybridEP's blocking dispatch. Sync-free: drop-and-pad
  // (moe_pad_expert_input_to_capacity with a capacity factor) for alltoall and HybridEP, and
  // HybridEP with moe_expert_rank_capacity_factor. The backward reuses the forward's counts.
  bool moe_dispatch_syncs() const {
    const bool padded = moe_capacity_factor > 0 && moe_pad_to_capacity;
    switch (moe_dispatcher) {
      case MoeDispatcher::kAllGather:
        return true;
      case MoeDispatcher::kAllToAll:
        return !padded;
      case MoeDispatcher::kFlex:
        return moe_flex_backend == MoeFlexBackend::kDeepEp ||
               !(padded || moe_expert_rank_capacity_factor > 0);
    }
    return true;
  }
  // Returns the CudaGraphModule bits captured for a layer of this plan: cuda_graph_scope, or
  // with an impl and an empty scope the whole layer (attn, mlp and moe; a dropless MoE layer
  // is refused that by the checks); moe brings moe_router and moe_preprocess, as Megatron-Core's
  // moe scope captures the whole MoE MLP; 0 without an impl.
  unsigned cuda_graph_modules() const {
    if (cuda_graph_impl == CudaGraphImpl::kNone) return 0;
    const unsigned s =
        cuda_graph_scope != 0 ? cuda_graph_scope : kGraphAttn | kGraphMlp | kGraphMoe;
    return (s & kGraphMoe) ? s | kGraphMoeRouter | kGraphMoePreprocess : s;
  }
};

}  // namespace trident

#endif  // TRIDENT_CONFIG_PLAN_H_
