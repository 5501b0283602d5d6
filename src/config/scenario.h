// A scenario: cluster + model + plan (+ optional sweep axes), loaded from YAML and validated.
#ifndef TRIDENT_CONFIG_SCENARIO_H_
#define TRIDENT_CONFIG_SCENARIO_H_

#include <string>
#include <utility>
#include <vector>

#include "config/cluster.h"
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
};

// Loads the scenario at `path`: reads referenced cluster/model/plan files (paths relative to
// the scenario file) or inline maps, applies `overrides` ("key.path=value", in order, after
// references are loaded), converts to typed specs and validates every field and the
// plan/model/cluster combination.
// Throws ConfigError / PlanError (one message with file, line and key) on bad input.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides);

// Loads a stand-alone cluster or model file (the files a scenario references). Error key
// paths start with "cluster." / "model.". Throws ConfigError on bad input.
ClusterSpec load_cluster_file(const std::string& path);
ModelSpec load_model_file(const std::string& path);

// What a YAML file describes, judged by its top-level keys.
enum class ConfigFileKind { kScenario, kCluster, kModel, kPlan };
const char* config_file_kind_name(ConfigFileKind kind);  // "scenario", "cluster", ...

// Checks one file of any kind (for `trident validate`): a scenario is fully loaded and
// cross-checked; a cluster or model file is converted; a plan file is checked field by field
// (its cross checks need a cluster and model). Returns the kind found.
// Throws ConfigError / PlanError on bad input, or when the kind cannot be told.
ConfigFileKind validate_config_file(const std::string& path);

}  // namespace trident

#endif  // TRIDENT_CONFIG_SCENARIO_H_
