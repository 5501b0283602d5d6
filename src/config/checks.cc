#include "config/checks.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "config/fabric_checks.h"
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
