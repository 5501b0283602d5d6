#include "config/checks.h"

#include <utility>

#include "core/errors.h"

namespace trident {

std::int64_t checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return -1;
  return out;
}

namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

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
    } else if (gpus % island != 0) {
      add(&issues, {"cluster.nvlink.island_size", "cluster.nodes"},
          "island_size " + str(island) + " does not divide the cluster's " + str(gpus) +
              " GPUs (nodes × gpus_per_node)");
    }
  }
  if (c.network.nics_per_node < 1) {
    add(&issues, {"cluster.network.nics_per_node"}, "must be at least 1");
  }
  return issues;
}

std::vector<SpecIssue> model_issues(const ModelSpec& m) {
  std::vector<SpecIssue> issues;
  if (m.num_layers < 1 || m.hidden_size < 1 || m.num_attention_heads < 1 || m.seq_length < 1 ||
      m.vocab_size < 1 || m.ffn_hidden_size < 1 || m.num_query_groups < 1) {
    add(&issues, {"model"}, "every model size must be at least 1");
    return issues;
  }
  if (m.hidden_size % m.num_attention_heads != 0) {
    add(&issues, {"model.num_attention_heads", "model.hidden_size"},
        "hidden_size " + str(m.hidden_size) + " is not divisible by num_attention_heads " +
            str(m.num_attention_heads) + " (each head needs the same dimension)");
  }
  if (m.num_attention_heads % m.num_query_groups != 0) {
    add(&issues, {"model.num_query_groups"},
        "num_query_groups " + str(m.num_query_groups) + " does not divide num_attention_heads " +
            str(m.num_attention_heads));
  }
  return issues;
}

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
  const std::int64_t gpus = checked_mul(checked_mul(p.tensor, p.pipeline), p.data);
  const std::int64_t cluster_gpus = checked_mul(c.nodes, c.gpus_per_node);
  if (gpus < 0 || gpus > cluster_gpus) {
    add(&issues, {"plan.data_parallel", "plan.tensor_parallel"},
        "plan uses " + (gpus < 0 ? std::string("too many") : str(gpus)) + " GPUs but cluster has " +
            str(cluster_gpus) + " (tensor " + str(p.tensor) + " × pipeline " + str(p.pipeline) +
            " × data " + str(p.data) + ")");
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
  if (m.num_layers % p.pipeline != 0) {
    add(&issues, {"plan.pipeline_parallel"},
        "model.num_layers " + str(m.num_layers) + " is not divisible by pipeline_parallel " +
            str(p.pipeline));
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
    } else if (m.num_layers % checked_mul(p.pipeline, p.virtual_stages) != 0) {
      add(&issues, {"plan.virtual_stages"},
          "model.num_layers " + str(m.num_layers) +
              " is not divisible by pipeline_parallel × virtual_stages = " +
              str(checked_mul(p.pipeline, p.virtual_stages)));
    }
  }
  return issues;
}

std::vector<SpecIssue> plan_issues(const PlanSpec& p, const ModelSpec& m, const ClusterSpec& c) {
  std::vector<SpecIssue> issues = plan_layout_issues(p, m, c);
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
}

}  // namespace trident
