// Loading a translated Megatron-LM launch line (config/megatron_args.h) as a scenario, with
// problems reported where the user wrote them: at the launch file's argument, not in the
// YAML trident generated from it.
#ifndef TRIDENT_CONFIG_MEGATRON_LOAD_H_
#define TRIDENT_CONFIG_MEGATRON_LOAD_H_

#include <string>
#include <vector>

#include "config/megatron_args.h"
#include "config/scenario.h"

namespace trident {

// Loads `translated.yaml` as load_scenario_text does (`label` as given to
// translate_megatron_args, then `overrides`). A ConfigError or PlanError about a setting an
// argument gave is rethrown (same type and message) at that argument: the launch file's
// line and column, key "--option (plan.key)"; one about a setting no argument gave keeps its
// key but no line (the generated YAML's lines mean nothing to the user). Problems in other
// files (the cluster) and in `overrides` pass unchanged.
Scenario load_megatron_scenario(const MegatronScenario& translated, const std::string& label,
                                const std::vector<std::string>& overrides);

}  // namespace trident

#endif  // TRIDENT_CONFIG_MEGATRON_LOAD_H_
