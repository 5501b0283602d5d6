#include "config/megatron_load.h"

namespace trident {
namespace {

// Where a problem at `where` (a position in the generated YAML) was written in the launch
// file: the origin of its key or of the nearest setting above it ("model.moe_layer_freq" for
// "model.moe_layer_freq.3").
SourceLocation in_launch_file(const SourceLocation& where, const MegatronScenario& translated) {
  for (std::string key = where.key; !key.empty();) {
    if (const auto it = translated.origins.find(key); it != translated.origins.end()) {
      SourceLocation out = it->second;
      out.key = it->second.key + " (" + where.key + ")";
      return out;
    }
    const std::size_t dot = key.find_last_of(".[");
    key = dot == std::string::npos ? "" : key.substr(0, dot);
  }
  return SourceLocation{where.file, 0, 0, where.key};
}

}  // namespace

Scenario load_megatron_scenario(const MegatronScenario& translated, const std::string& label,
                                const std::vector<std::string>& overrides) {
  try {
    return load_scenario_text(translated.yaml, label, overrides);
  } catch (const PlanError& e) {
    if (e.where().file != label) throw;
    throw PlanError(in_launch_file(e.where(), translated), e.message());
  } catch (const ConfigError& e) {
    if (e.where().file != label) throw;
    throw ConfigError(in_launch_file(e.where(), translated), e.message());
  }
}

}  // namespace trident
