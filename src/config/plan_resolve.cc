// Resolution of the `plan:` section on a cluster and model (config/section_readers.h
// resolve_plan): data_parallel, the first/last stage split, the batch field not given, then the
// plan checks.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/pipeline_layout.h"
#include "config/pipeline_split.h"
#include "config/section_readers.h"

namespace trident {
namespace {

[[noreturn]] void plan_fail(const MapReader& map, const std::string& key,
                            const std::string& message) {
  throw PlanError(map.location(key), message);
}

std::string str(std::int64_t v) { return std::to_string(v); }

}  // namespace

void resolve_plan(const MapReader& map, const PlanGiven& given, const ClusterSpec& cluster,
                  const ModelSpec& model, PlanSpec* p) {
  const std::int64_t cluster_gpus = usable_gpus(*p, cluster);
  const std::int64_t tp = checked_mul(checked_mul(p->tensor, p->context), p->pipeline);
  if (!given.data) {
    if (tp < 0 || tp > cluster_gpus) {
      plan_fail(map,
                map.has("pipeline_parallel")  ? "pipeline_parallel"
                : map.has("context_parallel") ? "context_parallel"
                                              : "tensor_parallel",
                "plan uses " + str(tp) + " GPUs but cluster has " + str(cluster_gpus) +
                    " (tensor " + str(p->tensor) + " × context " + str(p->context) +
                    " × pipeline " + str(p->pipeline) + ", and data_parallel at least 1)");
    }
    p->data = static_cast<int>(cluster_gpus / tp);
  }
  if (given.layers_per_virtual_stage) {
    const std::int64_t per_stage = checked_mul(p->pipeline, *given.layers_per_virtual_stage);
    if (per_stage <= 0 || model.num_layers % per_stage != 0) {
      plan_fail(map, "num_layers_per_virtual_pipeline_stage",
                "num_layers " + str(model.num_layers) +
                    " is not divisible by pipeline_parallel × "
                    "num_layers_per_virtual_pipeline_stage = " +
                    str(p->pipeline) + " × " + str(*given.layers_per_virtual_stage) +
                    " (expected whole model chunks)");
    }
    p->virtual_stages = static_cast<int>(model.num_layers / per_stage);
  }
  if (!given.layout_layers.empty()) {
    int decoders = 0;
    for (int n : given.layout_layers) decoders += n;
    if (decoders != model.num_layers) {
      plan_fail(map, "pipeline_model_parallel_layout",
                "places " + str(decoders) + " decoder layers ('t'), but model.num_layers is " +
                    str(model.num_layers) + " (expected every layer once)");
    }
    p->pipeline_layers = given.layout_layers;
    // Megatron-Core's validate_layer_layout: as many 'm' as --mtp-num-layers.
    if (given.layout_mtp_layers != model.mtp_num_layers) {
      plan_fail(map, "pipeline_model_parallel_layout",
                "places " + str(given.layout_mtp_layers) +
                    " multi-token-prediction layers ('m'), but model.mtp_num_layers is " +
                    str(model.mtp_num_layers) + " (expected as many 'm' as MTP layers)");
    }
    p->mtp_virtual_stage = given.layout_mtp_stage;
  }
  // A split derived from the accounting or first/last settings, or the failure of `key`.
  const auto take_split = [&](std::optional<std::vector<int>> split, const char* key,
                              const std::string& why) {
    if (!split) plan_fail(map, key, "cannot split the layers: " + why);
    p->pipeline_layers = std::move(*split);
  };
  if (given.embedding_in_split || given.loss_in_split) {
    std::string why;
    auto split = accounted_split(model.num_layers, p->pipeline, p->virtual_stages,
                                 given.embedding_in_split, given.loss_in_split, &why);
    take_split(std::move(split),
               given.embedding_in_split ? "account_for_embedding_in_pipeline_split"
                                        : "account_for_loss_in_pipeline_split",
               why);
  }
  if (given.first_stage_layers || given.last_stage_layers) {
    std::string why;
    auto split = first_last_split(model.num_layers, p->pipeline, p->virtual_stages,
                                  given.first_stage_layers, given.last_stage_layers, &why);
    take_split(std::move(split),
               given.first_stage_layers ? "decoder_first_pipeline_num_layers"
                                        : "decoder_last_pipeline_num_layers",
               why);
  }
  const std::vector<SpecIssue> layout = plan_layout_issues(*p, model, cluster);
  if (!layout.empty()) {
    report_issues(map, layout, true);
    return;
  }

  const std::int64_t per_microbatch = checked_mul(p->micro_batch_size, p->data);
  if (given.global_batch_size) {
    if (per_microbatch < 0 || p->global_batch_size % per_microbatch != 0) {
      plan_fail(map, "global_batch_size",
                "global_batch_size " + str(p->global_batch_size) +
                    " is not divisible by micro_batch_size × data_parallel = " +
                    str(p->micro_batch_size) + " × " + str(p->data) + " = " + str(per_microbatch));
    }
    p->num_microbatches = static_cast<int>(p->global_batch_size / per_microbatch);
  } else {
    const std::int64_t global = checked_mul(p->num_microbatches, per_microbatch);
    if (global < 0 || global > limits::kMaxGlobalBatchSize) {
      plan_fail(map, "num_microbatches",
                "num_microbatches × micro_batch_size × data_parallel = " +
                    (global < 0 ? std::string("(overflow)") : str(global)) +
                    " exceeds the global batch limit of " + str(limits::kMaxGlobalBatchSize));
    }
    p->global_batch_size = static_cast<int>(global);
  }
  const std::vector<SpecIssue> issues = plan_issues(*p, model, cluster);
  if (!issues.empty()) {
    report_issues(map, issues, true);
    return;
  }
  // Derived values a recipe states: the same as trident derives, or a contradiction.
  if (given.expert_data_parallel && *given.expert_data_parallel != p->expert_data_parallel()) {
    plan_fail(map, "expert_data_parallel",
              "expert_data_parallel " + str(*given.expert_data_parallel) +
                  " differs from tensor_parallel × context_parallel × data_parallel / "
                  "(expert_model_parallel_size × expert_tensor_parallel_size) = " +
                  str(p->tensor) + " × " + str(p->context) + " × " + str(p->data) + " / (" +
                  str(p->expert_parallel) + " × " + str(p->expert_tensor()) + ") = " +
                  str(p->expert_data_parallel()) + " (expected that value, or the key left out)");
  }
  if (given.gradient_accumulation && *given.gradient_accumulation != p->num_microbatches) {
    plan_fail(map, "gradient_accumulation",
              "gradient_accumulation " + str(*given.gradient_accumulation) +
                  " differs from num_microbatches = global_batch_size / (micro_batch_size × "
                  "data_parallel) = " +
                  str(p->num_microbatches) + " (expected that value, or the key left out)");
  }
  report_issues(map, simulation_size_issues(*p, cluster), true);
}

}  // namespace trident
