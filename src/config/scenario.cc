// Scenario loading: files, references, overrides, conversion, cross checks.
#include "config/scenario.h"

#include <filesystem>

#include "config/map_reader.h"
#include "config/overrides.h"
#include "config/schema.h"
#include "config/section_readers.h"
#include "config/yaml_tree.h"

namespace trident {
namespace {

// Returns the root of `path` as a map reader; throws when the file is not a map.
YamlNodePtr load_map_file(const std::string& path, const std::string& display,
                          const std::string& what) {
  YamlNodePtr root = load_yaml_file(path, display);
  if (!root->is_map()) {
    YamlMark m = root->mark;
    if (m.line == 0) m.line = 1, m.column = 1;
    throw ConfigError(location_of(m, ""),
                      "expected a map of " + what + " settings, got " + root->describe());
  }
  return root;
}

// Replaces a `cluster:`/`model:`/`plan:` path by the map read from that file.
void resolve_reference(YamlNode& root, const std::string& section,
                       const std::filesystem::path& base_dir) {
  YamlEntry* entry = root.find(section);
  const YamlNode& value = *entry->value;
  if (value.is_map()) return;
  if (!value.is_scalar()) {
    throw ConfigError(location_of(value.mark, section),
                      "expected a path to a YAML file or an inline map, got " + value.describe());
  }
  std::filesystem::path ref(value.scalar);
  std::filesystem::path full = ref.is_absolute() ? ref : (base_dir / ref).lexically_normal();
  try {
    entry->value = load_map_file(full.string(), full.string(), section);
  } catch (const ConfigError& e) {
    if (e.where().line > 0) throw;
    // The file itself is unreadable: point at the reference in the scenario.
    throw ConfigError(location_of(value.mark, section),
                      "cannot read `" + value.scalar + "`" +
                          (full.string() != value.scalar ? " (" + full.string() + ")" : "") + ": " +
                          e.message());
  }
}

std::vector<SweepAxis> read_sweep(const MapReader& top) {
  std::vector<SweepAxis> axes;
  auto sweep = top.opt_map("sweep");
  if (!sweep) return axes;
  for (const YamlEntry& e : sweep->node().entries) {
    const std::string key_path = "sweep." + e.key;
    const std::string error = schema_path_error(e.key);
    if (!error.empty()) throw ConfigError(location_of(e.key_mark, key_path), error);
    const YamlNode& list = *e.value;
    const std::string expected = "a non-empty list of values, e.g. [8, 16, 32]";
    if (!list.is_sequence() || list.items.empty()) {
      YamlMark m = list.is_null() ? e.key_mark : list.mark;
      throw ConfigError(location_of(m, key_path),
                        "expected " + expected + ", got " +
                            (list.is_sequence() ? "an empty list" : list.describe()));
    }
    SweepAxis axis;
    axis.key = e.key;
    for (const YamlNodePtr& item : list.items) {
      if (!item->is_scalar()) {
        throw ConfigError(location_of(item->mark, key_path),
                          "expected a single value per entry, got " + item->describe());
      }
      axis.values.push_back(item->scalar);
    }
    axes.push_back(std::move(axis));
  }
  return axes;
}

MapReader section_reader(const YamlNode& root, const std::string& section) {
  const YamlEntry* e = root.find(section);
  return MapReader(*e->value, section, e->key_mark);
}

}  // namespace

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  YamlNodePtr root = load_map_file(path, path, "scenario");
  MapReader top(*root, "", root->mark);
  top.check_keys();
  const std::filesystem::path base_dir = std::filesystem::path(path).parent_path();
  for (const char* section : {"cluster", "model", "plan"}) {
    top.require(section, "a path to a YAML file or an inline map");
    resolve_reference(*root, section, base_dir);
  }
  for (const std::string& text : overrides) apply_override(*root, parse_override(text));

  Scenario s;
  s.path = path;
  s.name = top.opt_string("name").value_or("");
  s.description = top.opt_string("description").value_or("");
  s.cluster = read_cluster(section_reader(*root, "cluster"));
  s.model = read_model(section_reader(*root, "model"));
  MapReader plan = section_reader(*root, "plan");
  PlanGiven given;
  s.plan = read_plan_fields(plan, &given);
  resolve_plan(plan, given, s.cluster, s.model, &s.plan);
  s.sweep = read_sweep(top);
  return s;
}

ClusterSpec load_cluster_file(const std::string& path) {
  YamlNodePtr root = load_map_file(path, path, "cluster");
  return read_cluster(MapReader(*root, "cluster", root->mark));
}

ModelSpec load_model_file(const std::string& path) {
  YamlNodePtr root = load_map_file(path, path, "model");
  return read_model(MapReader(*root, "model", root->mark));
}

const char* config_file_kind_name(ConfigFileKind kind) {
  switch (kind) {
    case ConfigFileKind::kScenario:
      return "scenario";
    case ConfigFileKind::kCluster:
      return "cluster";
    case ConfigFileKind::kModel:
      return "model";
    case ConfigFileKind::kPlan:
      return "plan";
  }
  return "?";
}

ConfigFileKind validate_config_file(const std::string& path) {
  YamlNodePtr root = load_map_file(path, path, "scenario, cluster, model or plan");
  auto has_any = [&](std::initializer_list<const char*> keys) {
    for (const char* k : keys) {
      if (root->find(k) != nullptr) return true;
    }
    return false;
  };
  if (has_any({"cluster", "model", "plan", "sweep"})) {
    load_scenario(path, {});
    return ConfigFileKind::kScenario;
  }
  if (has_any({"gpu", "gpus_per_node", "nodes", "nvlink", "network"})) {
    read_cluster(MapReader(*root, "cluster", root->mark));
    return ConfigFileKind::kCluster;
  }
  if (has_any({"num_layers", "hidden_size", "num_attention_heads", "vocab_size"})) {
    read_model(MapReader(*root, "model", root->mark));
    return ConfigFileKind::kModel;
  }
  if (has_any({"tensor_parallel", "pipeline_parallel", "micro_batch_size", "schedule"})) {
    PlanGiven given;
    read_plan_fields(MapReader(*root, "plan", root->mark), &given);
    return ConfigFileKind::kPlan;
  }
  throw ConfigError(location_of(root->mark, ""),
                    "cannot tell what this file describes (expected a scenario with cluster/"
                    "model/plan, a cluster with gpu/nodes, a model with num_layers, or a plan "
                    "with micro_batch_size)");
}

}  // namespace trident
