#include "config/checks.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "config/cuda_graph_checks.h"
#include "config/fabric_checks.h"
#include "config/pipeline_split.h"
#include "config/stragglers.h"
#include "core/errors.h"

namespace trident {

std::int64_t checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return -1;
  return out;
}

std::int64_t usable_gpus(const PlanSpec& p, const ClusterSpec& c) {
  const std::int64_t all = checked_mul(c.nodes, c.gpus_per_node);
  const int island = c.nvlink.island_size;
  if (p.gpus_per_island <= 0 || island <= 0 || all < 0 || p.gpus_per_island >= island) return all;
  // Whole islands give gpus_per_island each; a last, partial island its first ones.
  return all / island * p.gpus_per_island + std::min<std::int64_t>(all % island, p.gpus_per_island);
}

namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

// `value` / `unit` with up to four significant digits ("1.5", "80").
std::string short_number(double value, double unit) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", value / unit);
  return text;
}

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

std::vector<SpecIssue> cluster_issues(const ClusterSpec& c) {
  std::vector<SpecIssue> issues;
  if (c.gpu.peak_flops.empty()) {
    add(&issues, {"cluster.gpu.peak_flops"},
        "no peak given (expected at least one of bf16, fp16, fp8, tf32, fp32)");
  }
  const std::int64_t gpus = checked_mul(c.nodes, c.gpus_per_node);
  if (gpus < 0 || gpus > limits::kMaxGpus) {
    add(&issues, {"cluster.nodes"},
        "cluster has " + (gpus < 0 ? std::string("too many") : str(gpus)) +
            " GPUs (nodes × gpus_per_node), more than the limit of " + str(limits::kMaxGpus));
    return issues;
  }
  const int island = c.nvlink.island_size;
  if (island <= 0) {
    add(&issues, {"cluster.nvlink.island_size"}, "must be at least 1");
  } else {
    if (c.gpus_per_node % island != 0 && island % c.gpus_per_node != 0) {
      add(&issues, {"cluster.nvlink.island_size"},
          "island_size " + str(island) + " must divide or be a multiple of gpus_per_node " +
              str(c.gpus_per_node));
    }
    // An island of whole nodes may be cut short at the end of the cluster: a rack with fewer
    // trays (cluster.nodes not a multiple of the nodes per island).
  }
  if (c.network.nics_per_node < 1) {
    add(&issues, {"cluster.network.nics_per_node"}, "must be at least 1");
  }
  // One switch has no leaf uplinks to oversubscribe: the value would change nothing.
  if (c.network.topology == Topology::kSingleSwitch && c.network.oversubscription != 1) {
    add(&issues, {"cluster.network.oversubscription", "cluster.network.topology"},
        "oversubscription " + short_number(c.network.oversubscription, 1) +
            " has no effect on topology single-switch (one non-blocking switch; expected "
            "topology fat-tree, or no oversubscription)");
  }
  add_fabric_issues(c, &issues);
  if (c.gpu.memory_reserved_bytes >= 0 && c.gpu.memory_reserved_bytes >= c.gpu.memory_bytes) {
    const double gib = 1024.0 * 1024 * 1024;
    add(&issues, {"cluster.gpu.memory_reserved", "cluster.gpu.memory"},
        "memory_reserved " + short_number(c.gpu.memory_reserved_bytes, gib) +
            " GiB is not below the GPU's memory of " + short_number(c.gpu.memory_bytes, gib) +
            " GiB (nothing would be left for the model)");
  }
  return issues;
}

namespace {
// Megatron-Core's group-limited routing (megatron/core/transformer/moe/moe_utils.py
// group_limited_topk): equal groups of consecutive experts, group_topk of them per token, the
// top-k experts among theirs.
void router_group_issues(const ModelSpec& m, std::vector<SpecIssue>* issues) {
  const int groups = m.moe_router_num_groups, picked = m.moe_router_group_topk;
  if (groups == 0 && picked == 0) return;
  if (groups == 0 || picked == 0) {
    add(issues, {"model.moe_router_num_groups", "model.moe_router_group_topk"},
        "group-limited routing needs both moe_router_num_groups and moe_router_group_topk");
  } else if (m.num_experts % groups != 0) {
    add(issues, {"model.moe_router_num_groups", "model.num_experts"},
        "num_experts " + str(m.num_experts) + " is not divisible by moe_router_num_groups " +
            str(groups) + " (the groups are equal)");
  } else if (picked > groups) {
    add(issues, {"model.moe_router_group_topk"},
        "moe_router_group_topk " + str(picked) + " exceeds moe_router_num_groups " + str(groups));
  } else if (m.moe_router_topk > picked * (m.num_experts / groups)) {
    add(issues, {"model.moe_router_topk", "model.moe_router_group_topk"},
        "moe_router_topk " + str(m.moe_router_topk) + " exceeds the " +
            str(picked * (m.num_experts / groups)) + " experts of moe_router_group_topk " +
            str(picked) + " groups");
  }
}

}  // namespace

namespace {
// A layer uses a sliding window or chunks, not both (no model mixes them); NoPE layers need a
// RoPE model.
void local_attention_issues(const ModelSpec& m, std::vector<SpecIssue>* issues) {
  if (m.window_left >= 0 && m.attention_chunk_size > 0) {
    add(issues, {"model.window_size", "model.attention_chunk_size"},
        "window_size and attention_chunk_size together: a layer's attention is either a "
        "sliding window (gpt-oss) or chunked (Llama 4) (expected one of them)");
  }
  if (!m.no_rope_pattern.empty() && !m.rotary_position_embeddings) {
    add(issues, {"model.no_rope_freq", "model.position_embedding"},
        "no_rope_freq on a model without rotary embeddings (expected position_embedding rope)");
  }
}
}  // namespace

std::vector<SpecIssue> model_issues(const ModelSpec& m) {
  std::vector<SpecIssue> issues;
  if (m.num_layers < 1 || m.hidden_size < 1 || m.num_attention_heads < 1 || m.seq_length < 1 ||
      m.vocab_size < 1 || m.ffn_hidden_size < 1 || m.num_query_groups < 1) {
    add(&issues, {"model"}, "every model size must be at least 1");
    return issues;
  }
  // Megatron-LM arguments.py asks hidden_size % heads == 0 only without --kv-channels
  // (gpt-oss: hidden 2880, 64 heads of 64).
  if (m.kv_channels == 0 && m.hidden_size % m.num_attention_heads != 0) {
    add(&issues, {"model.num_attention_heads", "model.hidden_size"},
        "hidden_size " + str(m.hidden_size) + " is not divisible by num_attention_heads " +
            str(m.num_attention_heads) + " (each head needs the same dimension)");
  }
  if (m.num_attention_heads % m.num_query_groups != 0) {
    add(&issues, {"model.num_query_groups"},
        "num_query_groups " + str(m.num_query_groups) + " does not divide num_attention_heads " +
            str(m.num_attention_heads));
  }
  local_attention_issues(m, &issues);
  // The router's limits are the model's own, so a model file alone is checked for them.
  if (m.moe()) {
    if (m.moe_router_topk > m.num_experts) {
      add(&issues, {"model.moe_router_topk", "model.num_experts"},
          "moe_router_topk " + str(m.moe_router_topk) + " exceeds num_experts " +
              str(m.num_experts) + " (each token picks top-k distinct experts)");
    }
    router_group_issues(m, &issues);
  }
  // Megatron-Core TransformerConfig.__post_init__ (transformer_config.py): the aux-loss-free
  // expert bias works with sigmoid and sqrtsoftplus scores only.
  if (m.moe_router_enable_expert_bias && m.moe_router_score_function == "softmax") {
    add(&issues, {"model.moe_router_enable_expert_bias", "model.moe_router_score_function"},
        "moe_router_enable_expert_bias needs moe_router_score_function sigmoid or sqrtsoftplus "
        "(Megatron-Core refuses the expert bias with softmax scores)");
  }
  return issues;
}

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

namespace {

// Megatron-Core's MoEFlexTokenDispatcher (token_dispatcher.py) and TransformerConfig checks:
// a TP x EP group of more than one rank, no padding to capacity, no shared-expert overlap.
void flex_dispatcher_issues(const PlanSpec& p, const ModelSpec& m, std::vector<SpecIssue>* issues) {
  (void)m;
  if (p.moe_dispatcher != MoeDispatcher::kFlex) return;
  if (p.expert_parallel * p.expert_tensor() <= 1) {
    add(issues, {"plan.moe_token_dispatcher_type", "plan.expert_model_parallel_size"},
        "moe_token_dispatcher_type flex needs expert_model_parallel_size x "
        "expert_tensor_parallel_size above 1 (Megatron-Core: the flex dispatcher requires "
        "TPxEP > 1)");
  }
  if (p.moe_pad_to_capacity) {
    add(issues, {"plan.moe_token_dispatcher_type", "plan.moe_pad_expert_input_to_capacity"},
        "moe_token_dispatcher_type flex does not support moe_pad_expert_input_to_capacity "
        "(Megatron-Core refuses it)");
  }
  if (p.moe_shared_expert_overlap) {
    add(issues, {"plan.moe_token_dispatcher_type", "plan.moe_shared_expert_overlap"},
        "moe_shared_expert_overlap works with moe_token_dispatcher_type alltoall only "
        "(Megatron-Core refuses it with flex)");
  }
}

}  // namespace

// Megatron-Core's expert-parallel rules (megatron/core/parallel_state.py
// initialize_model_parallel, megatron/training/arguments.py): EP x ETP divides the GPUs of a
// pipeline stage (t x cp x d, folded in the order tp-ep-dp); the experts split evenly over EP;
// tensor parallelism with experts needs sequence parallelism. trident models ETP = 1 or t, and
// expert groups that tile the tensor-parallel groups (EP x ETP a multiple or a divisor of t).
void moe_plan_issues(const PlanSpec& p, const ModelSpec& m, std::vector<SpecIssue>* issues) {
  if (!m.moe()) {
    if (p.expert_parallel > 1) {
      add(issues, {"plan.expert_model_parallel_size"},
          "expert_model_parallel_size " + str(p.expert_parallel) +
              " needs a model with experts (model.num_experts is not set)");
    }
    return;
  }
  // Megatron-Core transformer_config.py: "Bias in Moe is only supported when ETP==1".
  if (m.expert_biases() && p.expert_tensor() != 1) {
    add(issues, {"model.add_bias_linear", "plan.expert_tensor_parallel_size"},
        "add_bias_linear with experts needs expert_tensor_parallel_size 1 (it is " +
            str(p.expert_tensor()) + "; Megatron-Core supports expert biases only then)");
  }
  if (m.num_experts % p.expert_parallel != 0) {
    add(issues, {"plan.expert_model_parallel_size", "model.num_experts"},
        "num_experts " + str(m.num_experts) + " is not divisible by expert_model_parallel_size " +
            str(p.expert_parallel) + " (each EP rank holds the same number of experts)");
  }
  const int etp = p.expert_tensor(), block = p.expert_parallel * etp;
  const int stage = p.tensor * p.context * p.data;
  if (etp != 1 && etp != p.tensor) {
    add(issues, {"plan.expert_tensor_parallel_size"},
        "expert_tensor_parallel_size " + str(etp) + " is neither 1 nor tensor_parallel " +
            str(p.tensor) + " (trident models experts unsplit or split like the dense layers)");
  } else if (stage % block != 0) {
    add(issues, {"plan.expert_model_parallel_size", "plan.expert_tensor_parallel_size"},
        "expert_model_parallel_size " + str(p.expert_parallel) + " x expert_tensor_parallel_size " +
            str(etp) + " does not divide tensor_parallel x context_parallel x data_parallel = " +
            str(stage) + " (the expert groups fold into the GPUs of a pipeline stage)");
  } else if (block % p.tensor != 0 && p.tensor % block != 0) {
    add(issues, {"plan.expert_model_parallel_size", "plan.tensor_parallel"},
        "expert_model_parallel_size " + str(p.expert_parallel) + " x expert_tensor_parallel_size " +
            str(etp) + " = " + str(block) + " is neither a multiple nor a divisor of " +
            "tensor_parallel " + str(p.tensor) +
            " (not modelled: expert groups must tile the "
            "tensor-parallel groups)");
  }
  if (etp != p.tensor && p.moe_dispatcher == MoeDispatcher::kAllGather) {
    add(issues, {"plan.expert_tensor_parallel_size", "plan.moe_token_dispatcher_type"},
        "expert_tensor_parallel_size " + str(etp) + " differs from tensor_parallel " +
            str(p.tensor) +
            ": trident models that with moe_token_dispatcher_type alltoall or flex only");
  }
  flex_dispatcher_issues(p, m, issues);
  if (p.tensor > 1 && !p.sequence_parallel) {
    add(issues, {"plan.sequence_parallel", "plan.tensor_parallel"},
        "a mixture of experts with tensor_parallel " + str(p.tensor) +
            " needs sequence_parallel: true (Megatron-Core requires it)");
  }
  if (p.moe_pad_to_capacity && p.moe_capacity_factor <= 0) {
    add(issues, {"plan.moe_pad_expert_input_to_capacity"},
        "moe_pad_expert_input_to_capacity needs moe_expert_capacity_factor (padding is to the "
        "capacity)");
  }
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

SimulatedScope every_replica_scope(const PlanSpec& p, bool full_fidelity) {
  SimulatedScope s;
  s.full_fidelity = full_fidelity;
  s.replicas = p.data;
  return s;
}

double estimated_sim_activities(const PlanSpec& p, const ModelSpec& m, const ClusterSpec& c,
                                const SimulatedScope& scope) {
  // Counted per actor from what the engine runs (engine/simulator.cc, step_collectives.cc,
  // claimed_runs.cc, phase_runner.cc): each compute, kernel beside a collective, flow and
  // sleep is one activity. Claimed runs only ever replace flows with one wait, and are
  // counted as the flows they may turn back into.
  const bool full = scope.full_fidelity;
  const double t = p.tensor, pp = p.pipeline, d = p.data, v = p.virtual_stages, cp = p.context;
  // Full fidelity simulates every replica; fast the replicas one_replica keeps (at least one).
  const double r = full ? d : std::clamp(static_cast<double>(scope.replicas), 1.0, d);
  double layers = double(m.num_layers) / (pp * v);  // of the largest chunk
  for (int n : p.pipeline_layers) layers = std::max(layers, double(n));
  const double actors = pp * r * cp * (full ? t : 1);
  const double passes = 2.0 * p.num_microbatches * v;
  // The GPUs an actor stands for: their pipeline, context and data-parallel flows are its own.
  const double ranks = full ? 1 : t;
  // Per pass: its compute, and the transfer it waits for: one flow per rank, a sleep before and
  // after them, and a claim's wait.
  double per_pass = 4 + ranks;
  // TP collectives, per layer (and one layer's worth for the embedding and output): two
  // all-reduces, or with sequence parallelism two all-gathers and two reduce-scatters, and the
  // experts' all-gather and reduce-scatter over an expert-TP group (alltoall or flex
  // dispatcher, expert_tensor_parallel_size > 1).
  const bool routed_tp =
      m.moe() && p.expert_tensor() > 1 && p.moe_dispatcher != MoeDispatcher::kAllGather;
  // Full recomputation runs a layer's forward again inside its backward pass: half as many
  // again per pass (selective recomputation repeats the attention core, whose collectives are
  // the context-parallel ring's).
  const double again = p.recompute == Recompute::kFull ? 1.5 : 1;
  const double ring_again = p.recompute == Recompute::kNone ? 1 : 1.5;
  const double tp_collectives =
      again * (layers + 1) * ((p.sequence_parallel ? 4 : 2) + (routed_tp ? 2 : 0));
  // Fused (fast): timed in closed form inside the pass's compute, no activity of their own (the
  // compute is cut only where a bucket, gather or ring step starts, each counted below with
  // that cut). Else each one: the compute before it, the kernel beside it, a claim's wait,
  // its flows and sleeps. A fast actor's collective is lowered over its group: inside an
  // NVLink island one phase of t ring edges; across islands up to three stages, pipelined
  // into five phases of t edges; under mirrored_tp tensor rank 0's edges only, two a phase.
  // A full-fidelity GPU runs its own share of 2(t - 1) ring steps and their synchronization
  // (measured: GPT-3 t=8 at m=4 ran 4.6M activities at full fidelity).
  const bool tp_in_island =
      p.placement[0] == ParallelDim::kTensor && p.tensor <= c.nvlink.island_size;
  const double tp_flows = full ? 3 * (t - 1) : tp_in_island ? t : 5 * (scope.mirrored_tp ? 2 : t);
  const double tp_sleeps = tp_in_island || full ? 2 : 4;
  // tp_comm_overlap: a ring exchange's t chunks or a pipeline's 4 splits, each a GEMM chunk
  // beside a collective.
  const double chunks = p.tp_comm_overlap ? std::max(t, 4.0) : 1;
  if (t > 1 && !(scope.fused_tp && !full)) {
    per_pass += tp_collectives * chunks * (3 + tp_flows + tp_sleeps);
  }
  // Expert parallelism: per MoE layer a dispatch and a combine over the expert-parallel group,
  // each the compute before it, a kernel beside it, two sleeps and the flows of each GPU the
  // actor stands for: one to each other member (alltoall, flex), two under nic_all_to_all or
  // collapsed_flex, a ring's (allgather: up to five phases, 3(EP - 1) steps at full fidelity).
  if (m.moe() && p.expert_parallel > 1) {
    const double ep = p.expert_parallel;
    const double member_flows = !full && scope.collapsed_all_to_all ? std::min(2.0, ep - 1)
                                : p.moe_dispatcher != MoeDispatcher::kAllGather ? ep - 1
                                : full                                          ? 3 * (ep - 1)
                                                                                : 5;
    per_pass += again * layers * 2 * (4 + ranks * member_flows);
  }
  // Context parallelism: per layer and pass, cp ring steps, each a compute, a flow per rank and
  // two sleeps.
  if (cp > 1) per_pass += ring_again * layers * cp * (3 + ranks);
  // Data-parallel reduction: a bucket per layer at most (and the embedding's and output's),
  // each reduced and gathered once a step, every micro-batch with sharded gradients, and
  // gathered twice more per micro-batch with sharded weights. Each simulated member (every
  // GPU of the simulated replicas' context ranks at full fidelity; a tensor group of them
  // fast, with a flow per rank in each of up to five phases) runs its flows and sleeps and
  // cuts its compute once. Experts reduced apart double it.
  const double buckets = layers * v + 2;
  const double dc = d * cp;
  const double rounds =
      2 * (p.shards_gradients() ? p.num_microbatches : 1.0) * (p.shards_params() ? 3 : 1);
  const double members = pp * r * cp * (full ? t : 1);
  const double per_collective = full ? 2 * (dc - 1) + 3 : 5 * t + 5;
  double dp = dc > 1 ? members * buckets * rounds * per_collective : 0;
  const bool experts_apart = m.moe() && (p.expert_parallel > 1 || p.expert_tensor() != p.tensor);
  if (experts_apart) dp *= 2;
  // And once a step: the optimizer and the waits for the reduction.
  return actors * (passes * per_pass + 4) + dp;
}

std::vector<SpecIssue> simulation_size_issues(const PlanSpec& p, const ClusterSpec& c) {
  std::vector<SpecIssue> issues;
  const std::int64_t gpus =
      checked_mul(checked_mul(checked_mul(p.tensor, p.context), p.pipeline), p.data);
  if (gpus < 0 || gpus > limits::kMaxSimulatedGpus) {
    add(&issues, {"plan.data_parallel", "plan.pipeline_parallel", "plan.tensor_parallel"},
        "plan uses " + str(gpus) + " GPUs, more than the " + str(limits::kMaxSimulatedGpus) +
            " one simulation can hold (the simulated-GPU limit; simulate a slice of the "
            "cluster with fewer data-parallel replicas)");
    return issues;
  }
  const std::int64_t routes = checked_mul(gpus, c.nvlink.island_size);
  if (routes < 0 || routes > limits::kMaxPlatformRoutes) {
    add(&issues, {"plan.data_parallel", "cluster.nvlink.island_size"},
        str(gpus) + " GPUs in NVLink islands of " + str(c.nvlink.island_size) + " need " +
            str(routes) + " routes, more than the platform-route limit of " +
            str(limits::kMaxPlatformRoutes) + " (use fewer GPUs)");
  }
  const std::int64_t per_stage = checked_mul(checked_mul(p.num_microbatches, p.virtual_stages), 2);
  const std::int64_t instructions = checked_mul(p.pipeline, per_stage + 4);
  if (per_stage < 0 || instructions < 0 || instructions > limits::kMaxScheduleInstructions) {
    add(&issues, {"plan.num_microbatches", "plan.global_batch_size", "plan.pipeline_parallel"},
        "the schedule would hold " +
            (instructions < 0 ? std::string("too many") : str(instructions)) +
            " instructions (pipeline_parallel × (num_microbatches × virtual_stages × 2 + 4)), "
            "more than the schedule-instruction limit of " +
            str(limits::kMaxScheduleInstructions) + " (use fewer micro-batches)");
  }
  return issues;
}

std::vector<SpecIssue> activity_limit_issues(const PlanSpec& p, const ModelSpec& m,
                                             const ClusterSpec& c, const SimulatedScope& scope) {
  std::vector<SpecIssue> issues;
  const double activities = estimated_sim_activities(p, m, c, scope);
  if (activities <= limits::kMaxSimActivities) return issues;
  const bool full = scope.full_fidelity;
  const int replicas = full ? p.data : std::clamp(scope.replicas, 1, p.data);
  char text[64];
  std::snprintf(text, sizeof text, "%.3g", activities);
  const bool all = replicas == p.data;
  const std::string actors =
      std::string("pipeline_parallel × ") + (all ? "data_parallel" : str(replicas)) +
      (p.context > 1 ? " × context_parallel" : "") + (full ? " × tensor_parallel" : "") +
      " actors" +
      (all ? ""
           : " (" + str(replicas) + " of " + str(p.data) + " data-parallel replicas simulated)");
  add(&issues, {"plan.num_microbatches", "plan.global_batch_size", "plan.data_parallel"},
      std::string("one step would run about ") + text +
          " simulation activities (about 2 × num_microbatches × virtual_stages passes on " +
          "each of " + actors +
          ", a few per layer each), more than the simulation-activity limit of " +
          str(static_cast<std::int64_t>(limits::kMaxSimActivities)) +
          " (use fewer micro-batches or data-parallel replicas" +
          (full ? ", or --fidelity fast)" : ")"));
  return issues;
}

void validate_scenario(const Scenario& s) {
  for (const SpecIssue& i : cluster_issues(s.cluster)) {
    throw ConfigError(SourceLocation{"", 0, 0, i.keys.front()}, i.message);
  }
  for (const SpecIssue& i : model_issues(s.model)) {
    throw ConfigError(SourceLocation{"", 0, 0, i.keys.front()}, i.message);
  }
  for (const SpecIssue& i : plan_issues(s.plan, s.model, s.cluster)) {
    throw PlanError(SourceLocation{"", 0, 0, i.keys.front()}, i.message);
  }
  for (const SpecIssue& i : simulation_size_issues(s.plan, s.cluster)) {
    throw PlanError(SourceLocation{"", 0, 0, i.keys.front()}, i.message);
  }
}

}  // namespace trident
