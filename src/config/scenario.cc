// Scenario loading: files, references, overrides, conversion, cross checks.
#include "config/scenario.h"

#include <algorithm>

#include "config/map_reader.h"
#include "config/overrides.h"
#include "config/references.h"
#include "config/schema.h"
#include "config/section_readers.h"
#include "config/settings.h"
#include "config/yaml_tree.h"
#include "core/text.h"

namespace trident {
namespace {

const char* const kSections[] = {"cluster", "model", "plan"};

ConfigFileKind section_kind(const std::string& section) {
  if (section == "cluster") return ConfigFileKind::kCluster;
  if (section == "model") return ConfigFileKind::kModel;
  return ConfigFileKind::kPlan;
}

// Reads `sweep:` (every value a non-empty list) or, with `section` "search", `search:`
// (a list, or one value that pins the key).
std::vector<SweepAxis> read_sweep(const MapReader& top, const std::string& section = "sweep") {
  std::vector<SweepAxis> axes;
  auto sweep = top.opt_map(section);
  if (!sweep) return axes;
  for (const YamlEntry& e : sweep->node().entries) {
    top.field([&] {
      const std::string key_path = section + "." + e.key;
      const std::string error = schema_path_error(e.key);
      if (!error.empty()) throw ConfigError(location_of(e.key_mark, key_path), error);
      const YamlNode& list = *e.value;
      if (section == "search" && list.is_scalar()) {
        axes.push_back({e.key, {list.scalar}});
        return;
      }
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
    });
  }
  return axes;
}

// Whether setting `key` lies in one of the `failed` sections (not loaded: nothing to set).
bool in_failed_section(const std::string& key, const std::vector<std::string>& failed) {
  for (const std::string& section : failed) {
    if (key.rfind(section + ".", 0) == 0) return true;
  }
  return false;
}

// Replaces an inline cluster's `gpu:` path by the GPU file's map.
void resolve_cluster_gpu(YamlNode& root, Diagnostics* diag) {
  YamlNode& cluster = *root.find("cluster")->value;
  if (cluster.is_map()) {
    resolve_reference(cluster, "gpu", "cluster.gpu", ConfigFileKind::kGpu, diag);
  }
}

// Replaces an inline plan's `stack:` name or path by the stack profile's map.
void resolve_plan_stack(YamlNode& root, Diagnostics* diag) {
  YamlNode& plan = *root.find("plan")->value;
  if (plan.is_map()) {
    resolve_reference(plan, "stack", "plan.stack", ConfigFileKind::kStack, diag);
  }
}

// Replaces a section's reference (path or library name) by the map it names.
void resolve_section(YamlNode& root, const std::string& section, Diagnostics* diag) {
  resolve_reference(root, section, section, section_kind(section), diag);
  if (section_kind(section) == ConfigFileKind::kCluster) resolve_cluster_gpu(root, diag);
  if (section_kind(section) == ConfigFileKind::kPlan) resolve_plan_stack(root, diag);
}

// Applies the scenario's `overrides:` map (dotted setting paths, as --set takes) in order:
// with `sections`, only those that replace a whole section (a section whose new file fails
// joins *failed); else all others.
void apply_file_overrides(const MapReader& top, YamlNode& root, std::vector<std::string>* failed,
                          bool sections, Diagnostics* diag) {
  const YamlEntry* entry = root.find("overrides");
  if (sections && (entry == nullptr || !entry->value->is_map())) return;  // checked next pass
  if (!top.opt_map("overrides")) return;                                  // throws when not a map
  const YamlNodePtr overrides = root.find("overrides")->value;
  for (const YamlEntry& e : overrides->entries) {
    if (is_section_reference_key(e.key) != sections) continue;
    const bool ok = top.field([&] {
      const std::string key_path = "overrides." + e.key;
      const std::string error = schema_path_error(e.key);
      if (!error.empty()) throw ConfigError(location_of(e.key_mark, key_path), error);
      if (in_failed_section(e.key, *failed)) return;
      set_setting(root, e.key, e.value->clone(), e.key_mark, key_path);
      // A stack named here is read now, so later keys can change one of its fields.
      if (canonical_key_path(e.key) == "plan.stack") resolve_plan_stack(root, diag);
      if (sections) resolve_section(root, e.key, diag);
    });
    if (!ok && sections) failed->push_back(e.key);
  }
}

MapReader section_reader(const YamlNode& root, const std::string& section, Diagnostics* diag) {
  const YamlEntry* e = root.find(section);
  return MapReader(*e->value, section, e->key_mark, diag);
}

// check_scenario of the file at `path`, or of `text` (named `path` in messages) when given.
Scenario check_scenario_source(const std::string& path, const std::string* text,
                               const std::vector<std::string>& overrides, Diagnostics* diag) {
  Scenario s;
  s.path = path;
  YamlNodePtr root;
  if (!attempt(diag, [&] {
        if (text != nullptr) {
          root = parse_yaml(*text, path, diag);
          if (!root->is_map()) throw ConfigError(location_of(root->mark, ""), "expected a map");
          return;
        }
        s.path = resolve_file_argument(path, {ConfigFileKind::kScenario});
        root = load_config_map(s.path, ConfigFileKind::kScenario, diag);
      })) {
    return s;
  }
  MapReader top(*root, "", root->mark, diag);
  top.check_keys();

  // Referenced files, then the file's overrides and the command line's, in that order.
  std::vector<std::string> failed;
  const auto is_failed = [&](const std::string& section) {
    return std::find(failed.begin(), failed.end(), section) != failed.end();
  };
  for (const char* section : kSections) {
    const bool ok = top.field([&] {
      top.require(section, "a path to a YAML file, a library name or an inline map");
      resolve_section(*root, section, diag);
    });
    if (!ok) failed.push_back(section);
  }
  // Whole sections swapped (`cluster: hgx-b200`) first, so that the other overrides apply
  // to the new section whatever their order.
  for (const bool sections : {true, false}) {
    top.field([&] { apply_file_overrides(top, *root, &failed, sections, diag); });
    for (const std::string& text : overrides) {
      // A bad override is reported once, in the second pass.
      const std::string key = trim(text.substr(0, text.find('=')));
      if (sections && !is_section_reference_key(key)) continue;
      const bool ok = top.field([&] {
        const Override ov = parse_override(text);
        if (is_section_reference_key(ov.key) != sections) return;
        if (in_failed_section(ov.key, failed)) return;
        apply_override(*root, ov);
        if (ov.key == "plan.stack") resolve_plan_stack(*root, diag);
        if (sections) resolve_section(*root, ov.key, diag);
      });
      if (!ok && sections) failed.push_back(key);
    }
  }
  // An override may have named a GPU file (relative to the file it is written in).
  if (!is_failed("cluster") && !top.field([&] { resolve_cluster_gpu(*root, diag); })) {
    failed.push_back("cluster");
  }

  // ... and a stack profile.
  if (!is_failed("plan") && !top.field([&] { resolve_plan_stack(*root, diag); })) {
    failed.push_back("plan");
  }

  top.field([&] { s.name = top.text("name").value_or(""); });
  top.field([&] { s.description = top.text("description").value_or(""); });
  const std::size_t before = problem_count(diag);
  if (!is_failed("cluster")) {
    top.field([&] { s.cluster = read_cluster(section_reader(*root, "cluster", diag)); });
  }
  if (!is_failed("model")) {
    top.field([&] { s.model = read_model(section_reader(*root, "model", diag)); });
  }
  if (!is_failed("plan")) {
    top.field([&] {
      MapReader plan = section_reader(*root, "plan", diag);
      PlanGiven given;
      s.plan = read_plan_fields(plan, &given);
      // The plan's cross checks need a sound cluster and model.
      if (failed.empty() && problem_count(diag) == before) {
        resolve_plan(plan, given, s.cluster, s.model, &s.plan);
      }
    });
  }
  top.field([&] { s.sweep = read_sweep(top); });
  top.field([&] { s.search = read_sweep(top, "search"); });
  return s;
}

}  // namespace

Scenario check_scenario(const std::string& path, const std::vector<std::string>& overrides,
                        Diagnostics* diag) {
  return check_scenario_source(path, nullptr, overrides, diag);
}

Scenario load_scenario_text(const std::string& text, const std::string& label,
                            const std::vector<std::string>& overrides) {
  return check_scenario_source(label, &text, overrides, nullptr);
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  return check_scenario(path, overrides, nullptr);
}

ClusterSpec load_cluster_file(const std::string& path) {
  YamlNodePtr root = load_config_map(path, ConfigFileKind::kCluster, nullptr);
  return read_cluster(MapReader(*root, "cluster", root->mark));
}

ModelSpec load_model_file(const std::string& path) {
  YamlNodePtr root = load_config_map(path, ConfigFileKind::kModel, nullptr);
  return read_model(MapReader(*root, "model", root->mark));
}

}  // namespace trident
