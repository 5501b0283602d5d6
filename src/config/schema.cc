#include "config/schema.h"

#include <map>

#include "config/did_you_mean.h"

namespace trident {
namespace {

const std::map<std::string, std::vector<std::string>>& schema() {
  static const std::vector<std::string> kAttentionKeys = {
      "forward", "backward", "half_seq", "backward_half_seq", "causal_seq", "half_head_dim"};
  static const std::map<std::string, std::vector<std::string>> kSchema = {
      {"", {"name", "description", "cluster", "model", "plan", "overrides", "sweep"}},
      {"cluster", {"name", "gpu", "nodes", "gpus_per_node", "nvlink", "network"}},
      {"cluster.gpu",
       {"name", "architecture", "peak_flops", "memory", "memory_bandwidth", "efficiency"}},
      {"cluster.gpu.peak_flops", {"bf16", "fp16", "fp8", "tf32", "fp32", "fp4"}},
      {"cluster.gpu.efficiency",
       {"gemm", "gemm_half_size", "memory", "kernel_overhead", "sm_count", "fused_attention",
        "flash_attention", "fp8", "fp4"}},
      {"cluster.gpu.efficiency.fp8",
       {"gemm", "gemm_half_size", "fused_attention", "flash_attention"}},
      {"cluster.gpu.efficiency.fp4",
       {"gemm", "gemm_half_size", "fused_attention", "flash_attention"}},
      {"cluster.gpu.efficiency.fused_attention", kAttentionKeys},
      {"cluster.gpu.efficiency.flash_attention", kAttentionKeys},
      {"cluster.gpu.efficiency.fp8.fused_attention", kAttentionKeys},
      {"cluster.gpu.efficiency.fp8.flash_attention", kAttentionKeys},
      {"cluster.gpu.efficiency.fp4.fused_attention", kAttentionKeys},
      {"cluster.gpu.efficiency.fp4.flash_attention", kAttentionKeys},
      {"cluster.nvlink",
       {"island_size", "bandwidth", "latency", "protocol_efficiency",
        "in_switch_reduction_efficiency"}},
      {"cluster.network",
       {"topology", "nics_per_node", "nic_bandwidth", "latency", "oversubscription",
        "nodes_per_leaf", "protocol_efficiency"}},
      {"model",
       {"name", "num_layers", "hidden_size", "num_attention_heads", "num_query_groups",
        "ffn_hidden_size", "seq_length", "vocab_size", "swiglu", "position_embedding",
        "untie_embeddings_and_output_weights", "attention_dropout", "hidden_dropout",
        "normalization"}},
      {"plan",
       {"tensor_parallel", "pipeline_parallel", "data_parallel", "micro_batch_size",
        "global_batch_size", "num_microbatches", "schedule", "virtual_stages", "sequence_parallel",
        "recompute", "distributed_optimizer", "overlap_grad_reduce", "placement", "precision",
        "pipeline_layers", "decoder_first_pipeline_num_layers", "decoder_last_pipeline_num_layers",
        "grad_bucket_size", "attention_backend", "fp8_recipe", "fp8_attention"}},
  };
  return kSchema;
}

}  // namespace

const std::vector<std::string>* schema_keys(const std::string& map_path) {
  auto it = schema().find(map_path);
  return it == schema().end() ? nullptr : &it->second;
}

std::string schema_path_error(const std::string& path) {
  std::vector<std::string> parts;
  std::string part;
  for (char c : path) {
    if (c == '.') {
      parts.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  parts.push_back(part);
  const std::vector<std::string> sections = {"cluster", "model", "plan"};
  if (parts.size() < 2 || schema_keys(parts[0]) == nullptr || parts[0].empty()) {
    const std::string hint = parts.size() >= 2 ? closest_match(parts[0], sections) : "";
    return "`" + path + "` is not a setting (expected a key path starting with cluster., model. " +
           "or plan." + (hint.empty() ? "" : "; did you mean `" + hint + "`?") + ")";
  }
  std::string prefix = parts[0];
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::vector<std::string>* keys = schema_keys(prefix);
    if (keys == nullptr) {
      return "`" + path + "` is not a setting (`" + prefix + "` has no sub-keys)";
    }
    bool known = false;
    for (const std::string& k : *keys) known = known || k == parts[i];
    if (!known) {
      return "unknown key `" + parts[i] + "` in `" + path + "` (" + suggestion(parts[i], *keys) +
             ")";
    }
    prefix += "." + parts[i];
  }
  return "";
}

}  // namespace trident
