// The plan checks of config/checks.h: plan_layout_issues (GPU count, divisibility, schedule,
// context parallelism, recomputation, precision) and plan_issues (those, stragglers, batch and
// MoE rules). The MoE rules are in moe_checks.cc, CUDA graphs in cuda_graph_checks.cc.
#include <string>
#include <utility>

#include "config/checks.h"
#include "config/cuda_graph_checks.h"
#include "config/moe_checks.h"
#include "config/pipeline_split.h"
#include "config/stragglers.h"

namespace trident {
namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

void add(std::vector<SpecIssue>* issues, std::vector<std::string> keys, std::string message) {
  issues->push_back(SpecIssue{std::move(keys), std::move(message)});
}

// The layers of each virtual stage: plan.pipeline_layers when given, else an even split.
void layer_split_issues(const PlanSpec& p, const ModelSpec& m, std::vector<SpecIssue>* issues) {
  const std::int64_t stages = checked_mul(p.pipeline, p.virtual_stages);
  const std::string stages_text = p.virtual_stages == 1
                                      ? "pipeline_parallel " + str(p.pipeline)
                                      : "pipeline_parallel × virtual_stages = " + str(stages);
  if (!p.pipeline_layers.empty()) {
    const std::int64_t entries = static_cast<std::int64_t>(p.pipeline_layers.size());
    std::int64_t sum = 0;
    bool positive = true;
    for (int n : p.pipeline_layers) {
      sum += n;
      positive = positive && n >= 0;
    }
    if (entries != stages) {
      add(issues, {"plan.pipeline_layers"},
          "has " + str(entries) + " entries, but " + stages_text +
              " (expected one entry per virtual stage)");
    } else if (!positive) {
      add(issues, {"plan.pipeline_layers"},
          "a virtual stage cannot hold fewer than zero layers (expected entries >= 0)");
    } else if (sum != m.num_layers) {
      add(issues, {"plan.pipeline_layers"},
          "entries sum to " + str(sum) + ", but model.num_layers is " + str(m.num_layers) +
              " (expected the layers of every virtual stage, summing to the model's)");
    }
    return;
  }
  if (stages > m.num_layers) {
    add(issues, {p.virtual_stages == 1 ? "plan.pipeline_parallel" : "plan.virtual_stages"},
        stages_text + " exceeds model.num_layers " + str(m.num_layers) +
            " (each virtual stage needs at least one layer)");
  } else if (m.num_layers % stages != 0) {
    add(issues, {p.virtual_stages == 1 ? "plan.pipeline_parallel" : "plan.virtual_stages"},
        "model.num_layers " + str(m.num_layers) + " is not divisible by " + stages_text +
            " (give an uneven split, e.g. " +
            propose_split(m.num_layers, p.pipeline, p.virtual_stages) + ")");
  }
}

}  // namespace

// Context parallelism as Megatron-Core runs it: the sequence in 2 × cp chunks (causal load
// balance, megatron/core/utils.py get_batch_on_this_cp_rank), each rank's s / cp tokens split
// again over t under sequence parallelism; attention through Transformer Engine's fused
// kernels (the local, unfused attention has no context parallelism).
namespace {
void context_parallel_issues(const PlanSpec& p, const ModelSpec& m, const ClusterSpec& c,
                             std::vector<SpecIssue>* issues) {
  if (p.context < 2) return;
  const std::int64_t chunks = checked_mul(2, p.context);
  const std::int64_t split = p.sequence_parallel ? checked_mul(chunks, p.tensor) : chunks;
  if (split < 0 || m.seq_length % split != 0) {
    add(issues, {"plan.context_parallel", "model.seq_length"},
        "model.seq_length " + str(m.seq_length) + " is not divisible by " +
            (p.sequence_parallel ? "tensor_parallel × 2 × context_parallel = " + str(p.tensor) +
                                       " × 2 × " + str(p.context)
                                 : "2 × context_parallel = 2 × " + str(p.context)) +
            " (expected " + (p.sequence_parallel ? "t × " : "") +
            "2 × cp equal chunks, as Megatron-Core splits the sequence)");
  }
  // Transformer Engine's ring (p2p) runs no sliding window: context_parallel.py
  // attn_forward_func_with_cp asserts cp_comm_type a2a or all_gather for it; PyTorch's
  // context_parallel takes only a plain causal mask. Chunked attention is refused alike.
  if (m.local_attention() &&
      (p.cp_implementation == CpImplementation::kTorch || p.cp_comm_type == CpCommType::kP2p)) {
    add(issues,
        {"plan.cp_comm_type",
         m.window_left >= 0 ? "model.window_size" : "model.attention_chunk_size"},
        std::string("context_parallel ") + str(p.context) + " with " +
            (m.window_left >= 0 ? "sliding-window" : "chunked") + " attention under " +
            (p.cp_implementation == CpImplementation::kTorch ? "cp_implementation torch"
                                                             : "cp_comm_type p2p") +
            ": Transformer Engine runs a window only with cp_comm_type all_gather or a2a "
            "(expected cp_comm_type all_gather or a2a, or context_parallel 1)");
  }
  if (p.cp_comm_type == CpCommType::kA2a && p.cp_implementation == CpImplementation::kTorch) {
    add(issues, {"plan.cp_comm_type", "plan.cp_implementation"},
        "cp_comm_type a2a under cp_implementation torch: PyTorch's context_parallel has no "
        "all-to-all attention (expected p2p or all_gather)");
  }
  // Transformer Engine's a2a splits the heads of Q and of K/V over the CP group
  // (flash_attn_a2a_communicate in context_parallel.py asserts both divide).
  const std::int64_t kv_heads =
      m.multi_latent_attention ? m.num_attention_heads : m.num_query_groups;
  const std::int64_t heads_split = checked_mul(p.tensor, p.context);
  if (p.cp_comm_type == CpCommType::kA2a &&
      (m.num_attention_heads % heads_split != 0 || kv_heads % heads_split != 0)) {
    add(issues, {"plan.cp_comm_type", "model.num_query_groups"},
        "cp_comm_type a2a needs num_attention_heads " + str(m.num_attention_heads) +
            " and key/value heads " + str(kv_heads) +
            " divisible by tensor_parallel × context_parallel = " + str(heads_split) +
            " (expected p2p or all_gather, or a smaller context_parallel)");
  }
  if (resolve_attention_backend(p.attention_backend, c.gpu.architecture) ==
      AttentionBackend::kUnfused) {
    add(issues, {"plan.context_parallel", "plan.attention_backend"},
        "context_parallel " + str(p.context) +
            " needs fused attention (Transformer Engine's context-parallel attention); "
            "attention_backend resolves to unfused (expected flash or fused, or a GPU with "
            "cluster.gpu.architecture)");
  }
}

// Megatron-Core TransformerConfig.__post_init__'s rules for recompute_modules under selective
// recomputation.
void recompute_module_issues(const PlanSpec& p, const ModelSpec& m,
                             std::vector<SpecIssue>* issues) {
  if (p.recompute != Recompute::kSelective) return;
  if (p.recomputes(kRecomputeMoeAct) && !p.moe_grouped_gemm) {
    add(issues, {"plan.recompute_modules", "plan.moe_grouped_gemm"},
        "recompute_modules moe_act needs moe_grouped_gemm true (Megatron-Core recomputes the "
        "activation of the grouped experts only)");
  }
  if (p.recomputes(kRecomputeMlaUpProj) && !m.multi_latent_attention) {
    add(issues, {"plan.recompute_modules", "model.multi_latent_attention"},
        "recompute_modules mla_up_proj needs multi_latent_attention true");
  }
  if (p.recomputes(kRecomputeSharedExperts) && p.moe_shared_expert_overlap &&
      m.moe_shared_expert_intermediate_size > 0) {
    add(issues, {"plan.recompute_modules", "plan.moe_shared_expert_overlap"},
        "recompute_modules shared_experts cannot work with moe_shared_expert_overlap "
        "(Megatron-Core refuses the pair)");
  }
}
}  // namespace

std::vector<SpecIssue> plan_layout_issues(const PlanSpec& p, const ModelSpec& m,
                                          const ClusterSpec& c) {
  std::vector<SpecIssue> issues;
  if (p.tensor < 1 || p.pipeline < 1 || p.data < 1 || p.micro_batch_size < 1 ||
      p.virtual_stages < 1) {
    add(&issues, {"plan"}, "parallel sizes, micro_batch_size and virtual_stages must be >= 1");
    return issues;
  }
  if (c.gpu.peak_flops.count(p.precision) == 0) {
    std::string have;
    for (const auto& kv : c.gpu.peak_flops) {
      have += std::string(have.empty() ? "" : ", ") + precision_name(kv.first);
    }
    add(&issues, {"plan.precision"},
        std::string("GPU ") + c.gpu.name + " has no peak_flops for " + precision_name(p.precision) +
            " (expected one of: " + have + ")");
  }
  if (p.precision == Precision::kFp8 && p.fp8_recipe == Fp8Recipe::kMxfp8 &&
      c.gpu.architecture != GpuArchitecture::kBlackwell) {
    add(&issues, {"plan.fp8_recipe"},
        std::string("fp8_recipe mxfp8 needs a Blackwell GPU (MXFP8 block scaling is a Blackwell "
                    "tensor-core format); GPU ") +
            c.gpu.name + " is " + architecture_name(c.gpu.architecture) +
            " (expected delayed, tensorwise or blockwise, or cluster.gpu.architecture: "
            "blackwell)");
  }
  if (p.precision == Precision::kFp4 && c.gpu.architecture != GpuArchitecture::kBlackwell) {
    add(&issues, {"plan.precision"},
        std::string("precision fp4 (NVFP4 training) needs a Blackwell GPU (NVFP4 block scaling is "
                    "a Blackwell tensor-core format); GPU ") +
            c.gpu.name + " is " + architecture_name(c.gpu.architecture) +
            " (expected bf16 or fp8, or cluster.gpu.architecture: blackwell)");
  }
  if (p.first_last_layers_bf16 && p.precision != Precision::kFp8 &&
      p.precision != Precision::kFp4) {
    add(&issues, {"plan.first_last_layers_bf16", "plan.precision"},
        std::string("first_last_layers_bf16 needs precision fp8 or fp4 (precision is ") +
            precision_name(p.precision) + ")");
  }
  if (p.optimizer_cpu_offload) {
    // Megatron-LM arguments.py: the hybrid device optimizer reuses the precision-aware
    // optimizer's code path, and FP8 primary weights need the delayed recipe; Megatron-Core
    // builds it inside the distributed optimizer (optimizer/__init__.py).
    if (!p.precision_aware_optimizer) {
      add(&issues, {"plan.optimizer_cpu_offload", "plan.use_precision_aware_optimizer"},
          "optimizer_cpu_offload needs use_precision_aware_optimizer: true (Megatron-LM's hybrid "
          "device optimizer reuses its code path)");
    }
    if (!p.distributed_optimizer) {
      add(&issues, {"plan.optimizer_cpu_offload", "plan.distributed_optimizer"},
          "optimizer_cpu_offload needs the distributed optimizer (distributed_optimizer: true, or "
          "a data_parallel_sharding_strategy other than no_shard)");
    }
    if (p.fp8_param_gather && p.fp8_recipe != Fp8Recipe::kDelayed) {
      add(&issues, {"plan.optimizer_cpu_offload", "plan.fp8_param_gather"},
          std::string("optimizer_cpu_offload with fp8_param_gather needs fp8_recipe delayed "
                      "(fp8_recipe is ") +
              fp8_recipe_name(p.fp8_recipe) + ")");
    }
    if (c.host.memory_bandwidth <= 0 || c.host.host_to_device_bandwidth <= 0 ||
        c.host.device_to_host_bandwidth <= 0) {
      add(&issues, {"plan.optimizer_cpu_offload"},
          "optimizer_cpu_offload needs the host's figures: cluster " + c.name +
              " has no cluster.host.memory_bandwidth, host_to_device_bandwidth and "
              "device_to_host_bandwidth");
    }
  }
  if (p.activation_offload != 0 &&
      (c.host.host_to_device_bandwidth <= 0 || c.host.device_to_host_bandwidth <= 0)) {
    // Megatron-Core fine-grained activation offloading copies over the GPU's host link.
    add(&issues, {"plan.activation_offload"},
        "activation_offload needs the host links: cluster " + c.name +
            " has no cluster.host.host_to_device_bandwidth and device_to_host_bandwidth");
  }
  recompute_module_issues(p, m, &issues);
  cuda_graph_issues(p, m, &issues);
  if (p.fp8_attention && p.precision != Precision::kFp8) {
    add(&issues, {"plan.fp8_attention", "plan.precision"},
        std::string("fp8_attention needs precision fp8 (precision is ") +
            precision_name(p.precision) + ")");
  }
  if (p.fp8_param_gather && p.precision != Precision::kFp8) {
    add(&issues, {"plan.fp8_param_gather", "plan.precision"},
        std::string("fp8_param_gather needs precision fp8 (precision is ") +
            precision_name(p.precision) + ")");
  } else if (p.fp8_param_gather && p.shards_params()) {
    add(&issues, {"plan.fp8_param_gather", "plan.data_parallel_sharding_strategy"},
        "fp8_param_gather with optim_grads_params (FP8 per-layer gathers) is not modelled: use "
        "no_shard or optim");
  }
  const std::int64_t gpus =
      checked_mul(checked_mul(checked_mul(p.tensor, p.context), p.pipeline), p.data);
  const std::int64_t cluster_gpus = usable_gpus(p, c);
  if (p.gpus_per_island > c.nvlink.island_size) {
    add(&issues, {"plan.gpus_per_island"},
        "gpus_per_island " + str(p.gpus_per_island) + " exceeds the island of " +
            str(c.nvlink.island_size) + " GPUs (cluster.nvlink.island_size)");
  }
  if (gpus < 0 || gpus > cluster_gpus) {
    add(&issues, {"plan.data_parallel", "plan.tensor_parallel"},
        "plan uses " + (gpus < 0 ? std::string("too many") : str(gpus)) + " GPUs but cluster has " +
            str(cluster_gpus) + " (tensor " + str(p.tensor) +
            (p.context > 1 ? " × context " + str(p.context) : std::string()) + " × pipeline " +
            str(p.pipeline) + " × data " + str(p.data) + ")");
  }
  context_parallel_issues(p, m, c, &issues);
  // Sequence parallelism scatters each sequence over the tensor-parallel ranks in equal
  // slices (Megatron-Core's scatter_to_sequence_parallel_region); with context parallelism the
  // check above covers it.
  if (p.sequence_parallel && p.tensor > 1 && p.context < 2 && m.seq_length % p.tensor != 0) {
    add(&issues, {"plan.sequence_parallel", "model.seq_length", "plan.tensor_parallel"},
        "sequence_parallel splits model.seq_length " + str(m.seq_length) +
            " over tensor_parallel " + str(p.tensor) +
            " ranks, and it is not divisible (expected a multiple of " + str(p.tensor) +
            ", or sequence_parallel: false)");
  }
  if (m.num_attention_heads % p.tensor != 0) {
    add(&issues, {"plan.tensor_parallel"},
        "model.num_attention_heads " + str(m.num_attention_heads) +
            " is not divisible by tensor_parallel " + str(p.tensor));
  }
  if (m.num_query_groups % p.tensor != 0) {
    add(&issues, {"plan.tensor_parallel"},
        "model.num_query_groups " + str(m.num_query_groups) +
            " is not divisible by tensor_parallel " + str(p.tensor));
  }
  if (p.tp_comm_overlap && (!p.sequence_parallel || p.tensor < 2)) {
    // Transformer Engine's userbuffers overlap the all-gather and reduce-scatter of sequence
    // parallelism; an all-reduce (no sequence parallelism) has nothing to split (Megatron's
    // arguments.py refuses the same).
    add(&issues, {"plan.tp_comm_overlap", "plan.sequence_parallel", "plan.tensor_parallel"},
        std::string("tp_comm_overlap needs sequence_parallel: true and tensor_parallel > 1 ") +
            "(sequence_parallel is " + (p.sequence_parallel ? "true" : "false") +
            ", tensor_parallel " + str(p.tensor) + ")");
  }
  if (p.overlap_param_gather && !p.distributed_optimizer) {
    add(&issues, {"plan.overlap_param_gather", "plan.distributed_optimizer"},
        "overlap_param_gather needs the distributed optimizer (distributed_optimizer: true, or "
        "a data_parallel_sharding_strategy other than no_shard): without it no parameter is "
        "gathered");
  }
  if (p.distributed_optimizer_instances > 1) {
    // Megatron-Core: the partial groups exist only for the distributed optimizer
    // (param_and_grad_buffer.py), and parallel_state.py asserts the splits are whole.
    const int n = p.distributed_optimizer_instances;
    if (!p.distributed_optimizer) {
      add(&issues, {"plan.num_distributed_optimizer_instances", "plan.distributed_optimizer"},
          "num_distributed_optimizer_instances " + str(n) +
              " needs the distributed optimizer (distributed_optimizer: true, or a "
              "data_parallel_sharding_strategy other than no_shard): without it the gradients "
              "are all-reduced over the whole data-parallel group");
    } else if (p.data_context() % n != 0) {
      add(&issues,
          {"plan.num_distributed_optimizer_instances", "plan.data_parallel",
           "plan.context_parallel"},
          "num_distributed_optimizer_instances " + str(n) +
              " does not divide the data-parallel group (data_parallel x context_parallel = " +
              str(p.data_context()) + ")");
    } else if (p.expert_parallel > 1 && p.expert_data_parallel() % n != 0) {
      add(&issues, {"plan.num_distributed_optimizer_instances", "plan.expert_parallel"},
          "num_distributed_optimizer_instances " + str(n) +
              " does not divide the expert-data-parallel group of " +
              str(p.expert_data_parallel()) + " GPUs");
    }
  }
  const bool interleaved = p.schedule == ScheduleKind::kInterleaved1F1B;
  if (!interleaved && p.virtual_stages != 1) {
    add(&issues, {"plan.virtual_stages", "plan.schedule"},
        "virtual_stages " + str(p.virtual_stages) +
            " needs schedule interleaved-1f1b (schedule is " + schedule_name(p.schedule) +
            "; use 1)");
  }
  if (interleaved) {
    if (p.pipeline < 2) {
      add(&issues, {"plan.pipeline_parallel", "plan.schedule"},
          "interleaved-1f1b needs pipeline_parallel >= 2");
    }
    if (p.virtual_stages < 2) {
      add(&issues, {"plan.virtual_stages", "plan.schedule"},
          "interleaved-1f1b needs virtual_stages >= 2 (model chunks per GPU)");
    }
  }
  if (interleaved == (p.virtual_stages != 1)) layer_split_issues(p, m, &issues);
  return issues;
}

std::vector<SpecIssue> plan_issues(const PlanSpec& p, const ModelSpec& m, const ClusterSpec& c) {
  std::vector<SpecIssue> issues = plan_layout_issues(p, m, c);
  if (!issues.empty()) return issues;
  issues = straggler_issues(c, p);
  if (!issues.empty()) return issues;
  if (p.num_microbatches < 1 || p.global_batch_size < 1) {
    add(&issues, {"plan.global_batch_size", "plan.num_microbatches"},
        "global_batch_size and num_microbatches must be at least 1");
    return issues;
  }
  if (p.schedule == ScheduleKind::kInterleaved1F1B) {
    if (p.num_microbatches % p.pipeline != 0) {
      add(&issues, {"plan.num_microbatches", "plan.global_batch_size"},
          "interleaved-1f1b needs num_microbatches (" + str(p.num_microbatches) +
              ") to be a multiple of pipeline_parallel (" + str(p.pipeline) + ")");
    }
  }
  moe_plan_issues(p, m, &issues);
  const std::int64_t global =
      checked_mul(checked_mul(p.num_microbatches, p.micro_batch_size), p.data);
  if (global != p.global_batch_size) {
    add(&issues, {"plan.global_batch_size", "plan.num_microbatches"},
        "global_batch_size " + str(p.global_batch_size) +
            " is not num_microbatches × micro_batch_size × data_parallel = " +
            (global < 0 ? std::string("(overflow)") : str(global)));
  }
  return issues;
}

}  // namespace trident
