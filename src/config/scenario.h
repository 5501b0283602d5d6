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
  std::string path;  // scenario file as given on the command line
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

}  // namespace trident

#endif  // TRIDENT_CONFIG_SCENARIO_H_
