// Checking one configuration file of any kind (`trident validate`).
#include <initializer_list>

#include "config/hf_import.h"
#include "config/map_reader.h"
#include "config/overrides.h"
#include "config/references.h"
#include "config/scenario.h"
#include "config/section_readers.h"
#include "config/stack.h"

namespace trident {
namespace {

// Tells the kind from the top-level keys; nullopt when none is typical of any kind.
std::optional<ConfigFileKind> kind_of(const YamlNode& root) {
  const auto has_any = [&](std::initializer_list<const char*> keys) {
    for (const char* k : keys) {
      if (root.find(k) != nullptr) return true;
    }
    return false;
  };
  if (has_any({"cluster", "model", "plan", "sweep", "search", "overrides"}))
    return ConfigFileKind::kScenario;
  if (has_any({"gpu", "gpus_per_node", "nodes", "nvlink", "network"})) {
    return ConfigFileKind::kCluster;
  }
  if (has_any({"peak_flops", "memory_bandwidth", "efficiency"})) return ConfigFileKind::kGpu;
  if (has_any({"num_layers", "hidden_size", "num_attention_heads", "vocab_size"})) {
    return ConfigFileKind::kModel;
  }
  if (has_any({"elementwise", "attention", "host_time_per_kernel", "tp_grad_overlap",
               "selective_recompute"})) {
    return ConfigFileKind::kStack;
  }
  if (has_any({"tensor_parallel", "pipeline_parallel", "data_parallel", "micro_batch_size",
               "global_batch_size", "num_microbatches", "schedule"})) {
    return ConfigFileKind::kPlan;
  }
  return std::nullopt;
}

// Applies the `section.` overrides (the others name parts of a scenario this file is not) to
// a cluster or model file's map, as they would apply to it inside a scenario.
void apply_section_overrides(YamlNodePtr* section, const std::string& name,
                             const std::vector<std::string>& overrides, Diagnostics* diag) {
  auto root = std::make_shared<YamlNode>();
  root->kind = YamlNode::Kind::kMap;
  root->set(name, (*section)->mark, *section);
  for (const std::string& text : overrides) {
    attempt(diag, [&] {
      const Override ov = parse_override(text);
      if (ov.key.rfind(name + ".", 0) == 0) apply_override(*root, ov);
    });
  }
  *section = root->find(name)->value;
}

}  // namespace

const char* config_file_kind_name(ConfigFileKind kind) {
  switch (kind) {
    case ConfigFileKind::kScenario:
      return "scenario";
    case ConfigFileKind::kCluster:
      return "cluster";
    case ConfigFileKind::kGpu:
      return "GPU";
    case ConfigFileKind::kModel:
      return "model";
    case ConfigFileKind::kPlan:
      return "plan";
    case ConfigFileKind::kStack:
      return "stack";
  }
  return "?";
}

CheckedConfigFile check_config_file(const std::string& argument,
                                    const std::vector<std::string>& overrides, Diagnostics* diag) {
  CheckedConfigFile out;
  out.specs.path = argument;
  std::string path = argument;  // a library name becomes the file's path
  if (!attempt(diag, [&] {
        path = resolve_file_argument(
            argument, {ConfigFileKind::kScenario, ConfigFileKind::kCluster, ConfigFileKind::kModel,
                       ConfigFileKind::kGpu, ConfigFileKind::kPlan, ConfigFileKind::kStack});
      })) {
    return out;
  }
  if (is_hf_reference(path)) {
    out.kind = ConfigFileKind::kModel;
    attempt(diag, [&] {
      YamlNodePtr root = load_config_map(path, ConfigFileKind::kModel, diag);
      apply_section_overrides(&root, "model", overrides, diag);
      out.specs.model = read_model(MapReader(*root, "model", root->mark, diag));
    });
    return out;
  }
  // Read once to tell the kind. Syntax problems (and duplicate keys before them) are
  // reported here; otherwise the file is read again by the checks for its kind.
  YamlNodePtr root;
  Diagnostics probe;
  if (!attempt(&probe, [&] { root = load_config_map(path, ConfigFileKind::kScenario, &probe); })) {
    for (const Problem& p : probe.problems()) report(diag, ConfigError(p.where, p.message), p.plan);
    return out;
  }
  out.kind = kind_of(*root);
  if (!out.kind) {
    report(diag, ConfigError(location_of(root->mark, ""),
                             "cannot tell what this file describes (expected a scenario with "
                             "cluster/model/plan, a cluster with gpu/nodes, a GPU with "
                             "peak_flops, a model with num_layers, or a plan with "
                             "micro_batch_size)"));
    return out;
  }
  attempt(diag, [&] {
    switch (*out.kind) {
      case ConfigFileKind::kScenario:
        out.specs = check_scenario(path, overrides, diag);
        break;
      case ConfigFileKind::kCluster: {
        YamlNodePtr cluster = load_config_map(path, ConfigFileKind::kCluster, diag);
        apply_section_overrides(&cluster, "cluster", overrides, diag);
        out.specs.cluster = read_cluster(MapReader(*cluster, "cluster", cluster->mark, diag));
        break;
      }
      case ConfigFileKind::kGpu: {
        YamlNodePtr gpu = load_config_map(path, ConfigFileKind::kGpu, diag);
        out.specs.cluster.gpu = read_gpu(MapReader(*gpu, "cluster.gpu", gpu->mark, diag));
        break;
      }
      case ConfigFileKind::kModel: {
        YamlNodePtr model = load_config_map(path, ConfigFileKind::kModel, diag);
        apply_section_overrides(&model, "model", overrides, diag);
        out.specs.model = read_model(MapReader(*model, "model", model->mark, diag));
        break;
      }
      case ConfigFileKind::kStack: {
        YamlNodePtr stack = load_config_map(path, ConfigFileKind::kStack, diag);
        out.specs.plan.stack = read_stack(MapReader(*stack, "plan.stack", stack->mark, diag));
        break;
      }
      case ConfigFileKind::kPlan: {
        YamlNodePtr plan = load_config_map(path, ConfigFileKind::kPlan, diag);
        PlanGiven given;
        out.specs.plan = read_plan_fields(MapReader(*plan, "plan", plan->mark, diag), &given);
        break;
      }
    }
  });
  return out;
}

ConfigFileKind validate_config_file(const std::string& path) {
  return *check_config_file(path, {}, nullptr).kind;
}

}  // namespace trident
