// A scenario: cluster + model + plan (+ optional sweep axes), loaded from YAML and validated.
#ifndef TRIDENT_CONFIG_SCENARIO_H_
#define TRIDENT_CONFIG_SCENARIO_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/cluster.h"
#include "config/diagnostics.h"
#include "config/model.h"
#include "config/plan.h"

namespace trident {

// One `sweep:` axis: a dotted key ("plan.num_microbatches") and its values as written.
struct SweepAxis {
  std::string key;
  std::vector<std::string> values;
};

struct Scenario {
  std::string path;         // scenario file as given on the command line
  std::string name;         // optional `name:`; empty if not given
  std::string description;  // optional `description:`
  ClusterSpec cluster;
  ModelSpec model;
  PlanSpec plan;
  std::vector<SweepAxis> sweep;
  // `search:` for `trident plan`: searched keys, each pinned (one value) or limited.
  std::vector<SweepAxis> search;
};

// Loads the scenario at `path`: reads referenced cluster/model/plan files (paths relative to
// the scenario file; a model also as a Hugging Face config.json) or inline maps, applies the
// file's `overrides:` and then `overrides` ("key.path=value", in order), converts to typed
// specs and validates every field, the plan/model/cluster combination, and the size of the
// simulation (config/limits.h: GPUs, routes, schedule instructions; the activities a step runs
// depend on the engine's shortcuts and are checked by lowering/shortcuts.h
// check_simulation_activities before simulating).
// Throws ConfigError / PlanError (one message with file, line and key) on bad input.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides);

// Loads a scenario from YAML `text` as load_scenario loads a file; `label` names it in
// messages and its directory is the one relative paths in it are read from.
Scenario load_scenario_text(const std::string& text, const std::string& label,
                            const std::vector<std::string>& overrides);

// Checks the scenario at `path` as load_scenario does, but records every problem in `diag`
// instead of stopping at the first (the first recorded is the one load_scenario throws).
// The returned scenario is meaningful only when nothing was recorded.
Scenario check_scenario(const std::string& path, const std::vector<std::string>& overrides,
                        Diagnostics* diag);

// Loads a stand-alone cluster or model file (the files a scenario references). Error key
// paths start with "cluster." / "model.". Throws ConfigError on bad input.
ClusterSpec load_cluster_file(const std::string& path);
ModelSpec load_model_file(const std::string& path);

// What a configuration file describes, judged by its top-level keys (".json": a model).
enum class ConfigFileKind { kScenario, kCluster, kGpu, kModel, kPlan, kStack };
const char* config_file_kind_name(ConfigFileKind kind);  // "scenario", "cluster", ...

// Checks one file of any kind (for `trident validate`): a scenario is fully loaded with
// `overrides` and cross-checked; a cluster, GPU or model file is converted; a plan file is
// checked field by field (its cross checks need a cluster and model). Returns the kind found.
// Throws ConfigError / PlanError at the first problem, or when the kind cannot be told.
ConfigFileKind validate_config_file(const std::string& path);

// What check_config_file found: the kind (unset when the file could not be read or told)
// and the specs it describes (the scenario's, or the cluster, cluster.gpu, model or plan
// of a stand-alone file).
struct CheckedConfigFile {
  std::optional<ConfigFileKind> kind;
  Scenario specs;
};

// As validate_config_file, but records every problem in `diag`.
CheckedConfigFile check_config_file(const std::string& path,
                                    const std::vector<std::string>& overrides, Diagnostics* diag);

}  // namespace trident

#endif  // TRIDENT_CONFIG_SCENARIO_H_
