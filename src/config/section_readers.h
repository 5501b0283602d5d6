// Converters from checked YAML maps to the typed cluster, model and plan specs. Each reports
// problems through the map's diagnostics (config/diagnostics.h): without, it throws at the
// first; with, it records every field's problem, skips the cross checks of a section whose
// fields failed, and returns a spec that is only meaningful when nothing was recorded.
#ifndef TRIDENT_CONFIG_SECTION_READERS_H_
#define TRIDENT_CONFIG_SECTION_READERS_H_

#include <optional>
#include <vector>

#include "config/checks.h"
#include "config/cluster.h"
#include "config/map_reader.h"
#include "config/model.h"
#include "config/plan.h"

namespace trident {

// Converts the `cluster` map (path "cluster"): checks keys, types, units and ranges, fills
// defaults (island_size and nics_per_node = gpus_per_node) and runs cluster_issues.
// Throws ConfigError located at the offending key.
ClusterSpec read_cluster(const MapReader& map);

// Converts a `gpu` map (path "cluster.gpu"): name, peaks, memory and compute efficiency.
GpuSpec read_gpu(const MapReader& map);

// Converts the `model` map (path "model"), fills defaults (num_query_groups = heads,
// ffn_hidden_size = 4 × hidden unless swiglu) and runs model_issues. Throws ConfigError.
ModelSpec read_model(const MapReader& map);

// Which of the plan's derived fields the user wrote, and the fields that resolve into others.
struct PlanGiven {
  bool data = false;
  bool global_batch_size = false;
  bool num_microbatches = false;
  std::optional<int> first_stage_layers;        // decoder_first_pipeline_num_layers
  std::optional<int> last_stage_layers;         // decoder_last_pipeline_num_layers
  std::optional<int> layers_per_virtual_stage;  // num_layers_per_virtual_pipeline_stage
  std::vector<int> layout_layers;   // pipeline_model_parallel_layout's decoder layers per stage
  int layout_mtp_stage = -1;        // the layout's virtual stage with 'm' (-1: none)
  int layout_mtp_layers = 0;        // and their number
  bool embedding_in_split = false;  // account_for_embedding_in_pipeline_split
  bool loss_in_split = false;       // account_for_loss_in_pipeline_split
  // Derived values a recipe states, checked against trident's once the plan is resolved.
  std::optional<int> expert_data_parallel;   // expert_data_parallel
  std::optional<int> gradient_accumulation;  // gradient_accumulation
};

// Converts the `plan` map (path "plan") field by field, without the cluster or model:
// data_parallel, global_batch_size and num_microbatches stay 0 unless given. Requires
// exactly one of global_batch_size and num_microbatches, and at most one of pipeline_layers
// and decoder_first/last_pipeline_num_layers.
PlanSpec read_plan_fields(const MapReader& map, PlanGiven* given);

// Resolves the plan's defaults on `cluster` and `model` (data_parallel, the first/last stage
// split into pipeline_layers, then the batch field not given) and runs plan_issues and
// simulation_size_issues (the activity limit is checked where the engine's shortcuts are
// known: lowering/shortcuts.h). Reports PlanError located at the plan key.
void resolve_plan(const MapReader& map, const PlanGiven& given, const ClusterSpec& cluster,
                  const ModelSpec& model, PlanSpec* plan);

// Returns where in `map` (whose path prefixes the issue keys) to point for `issue`: the
// first of its keys that is written there, else the map itself.
SourceLocation locate_issue(const MapReader& map, const SpecIssue& issue);

// Reports each of `issues` at locate_issue (as PlanError when `plan`): without diagnostics,
// throws the first.
void report_issues(const MapReader& map, const std::vector<SpecIssue>& issues, bool plan);

}  // namespace trident

#endif  // TRIDENT_CONFIG_SECTION_READERS_H_
