// Typed, validated 3D-parallel plan (docs/schema.md, `plan`).
#ifndef TRIDENT_CONFIG_PLAN_H_
#define TRIDENT_CONFIG_PLAN_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "config/cluster.h"

namespace trident {

enum class ScheduleKind { kGpipe, k1F1B, kInterleaved1F1B };
enum class Recompute { kNone, kSelective, kFull };
enum class ParallelDim { kTensor, kData, kPipeline };
// Megatron-Core --attention-backend. kUnfused: QK^T, softmax, dropout and attention over V as
// separate kernels with the s x s scores in HBM (Megatron 2020-22). kFlash / kFused: one
// FlashAttention / cuDNN kernel per pass. kAuto: what Megatron-Core with Transformer Engine
// picks on the GPU (resolve_attention_backend).
enum class AttentionBackend { kAuto, kFlash, kFused, kUnfused };
// Megatron --fp8-recipe: delayed (per-tensor scale from an amax history), tensorwise (current
// per-tensor scaling), blockwise (1x128 / 128x128 blocks), mxfp8 (32-element blocks with
// E8M0 scales; Blackwell only).
enum class Fp8Recipe { kDelayed, kTensorwise, kBlockwise, kMxfp8 };
// Megatron-Core --moe-token-dispatcher-type (megatron/core/transformer/moe/token_dispatcher.py).
enum class MoeDispatcher { kAllGather, kAllToAll };

const char* schedule_name(ScheduleKind s);
bool parse_schedule(const std::string& name, ScheduleKind* out);
const char* recompute_name(Recompute r);
bool parse_recompute(const std::string& name, Recompute* out);
const char* parallel_dim_name(ParallelDim d);
bool parse_parallel_dim(const std::string& name, ParallelDim* out);
const char* attention_backend_name(AttentionBackend b);
bool parse_attention_backend(const std::string& name, AttentionBackend* out);
const char* fp8_recipe_name(Fp8Recipe r);
bool parse_fp8_recipe(const std::string& name, Fp8Recipe* out);
// Returns the backend `auto` stands for on `arch`: fused (cuDNN) on Hopper and Blackwell, where
// Transformer Engine prefers cuDNN fused attention; flash on Ampere, where it prefers
// FlashAttention-2; unfused on a GPU file that declares no architecture (trident's model
// before fused attention). Other backends are returned as they are.
AttentionBackend resolve_attention_backend(AttentionBackend b, GpuArchitecture arch);

struct PlanSpec {
  int tensor = 1;
  int pipeline = 1;
  int data = 1;  // resolved: default gpus / (tensor * pipeline)
  int micro_batch_size = 1;
  int global_batch_size = 0;  // resolved: = num_microbatches * micro_batch_size * data
  int num_microbatches = 0;   // per pipeline; resolved from global_batch_size if not given
  ScheduleKind schedule = ScheduleKind::k1F1B;
  int virtual_stages = 1;
  bool sequence_parallel = false;
  Recompute recompute = Recompute::kNone;
  bool distributed_optimizer = false;
  bool overlap_grad_reduce = false;
  // Rank order, fastest-varying first. [tensor, data, pipeline] keeps a TP group inside a node.
  std::array<ParallelDim, 3> placement{ParallelDim::kTensor, ParallelDim::kData,
                                       ParallelDim::kPipeline};
  Precision precision = Precision::kBf16;
  AttentionBackend attention_backend = AttentionBackend::kAuto;
  // precision fp8 only: the scaling recipe, and whether attention runs in FP8 too (otherwise
  // BF16, as Transformer Engine runs it by default).
  Fp8Recipe fp8_recipe = Fp8Recipe::kDelayed;
  bool fp8_attention = false;
  // Layers of each virtual pipeline stage, in model order (chunk c of stage s is virtual stage
  // c * pipeline + s); size pipeline * virtual_stages. Empty: an even split.
  std::vector<int> pipeline_layers;
  // Parameters per gradient bucket when overlap_grad_reduce is on; 0: Megatron's default,
  // max(40M, 1M x data_parallel).
  std::int64_t grad_bucket_size = 0;
  // The whole training run, for time to train and cost (0: not given).
  double train_tokens = 0;
  double gpu_hour_price = 0;  // per GPU-hour; meaningful when has_gpu_hour_price
  bool has_gpu_hour_price = false;

  // Mixture of experts (models with num_experts > 0). The EP ranks of an expert group are
  // consecutive data-parallel ranks with the same tensor and pipeline rank (Megatron-Core's
  // expert rank order tp-ep-dp-pp with expert_tensor_parallel_size = tensor).
  int expert_parallel = 1;
  int expert_tensor_parallel = 0;  // resolved: = tensor
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllGather;
  double moe_capacity_factor = 0;  // 0: dropless
  bool moe_pad_to_capacity = false;
  double moe_load_imbalance = 1;  // busiest expert's tokens / mean
  bool moe_shared_expert_overlap = false;

  int gpus() const { return tensor * pipeline * data; }
  // Returns the expert-data-parallel size d / EP (the group that reduces expert gradients).
  int expert_data_parallel() const { return data / expert_parallel; }
};

}  // namespace trident

#endif  // TRIDENT_CONFIG_PLAN_H_
