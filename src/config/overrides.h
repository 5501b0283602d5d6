// `--set key.path=value` overrides, applied to the merged scenario tree before conversion.
#ifndef TRIDENT_CONFIG_OVERRIDES_H_
#define TRIDENT_CONFIG_OVERRIDES_H_

#include <string>

#include "config/yaml_tree.h"

namespace trident {

struct Override {
  std::string key;    // dotted path, e.g. "cluster.nvlink.bandwidth"
  std::string value;  // as written after '=', parsed as YAML ("300 GB/s", "8", "[a, b]")
  std::string label;  // "--set key=value": the "file" named by errors about this override
};

// Splits "key.path=value" at the first '='. Throws ConfigError (file "--set <text>") when
// there is no '=', the key is empty, or the key is not a known setting (did-you-mean hint).
Override parse_override(const std::string& text);

// Sets `ov.key` in the scenario tree `root` (a map holding cluster/model/plan maps, with
// referenced files already loaded), creating missing intermediate maps. The new value's
// marks name `ov.label`, so conversion errors point at the override. Setting
// plan.num_microbatches removes plan.global_batch_size and vice versa, so a sweep over one
// works on a scenario that gives the other; likewise plan.pipeline_layers and
// plan.decoder_first/last_pipeline_num_layers. Throws ConfigError when the value is not valid
// YAML or a key on the path holds a non-map value.
void apply_override(YamlNode& root, const Override& ov);

// Sets the setting `key` (already checked with schema_path_error) in the scenario tree `root`
// to `value`, which keeps its own marks, as apply_override does. `label` names the override
// in errors ("--set k=v", "overrides.plan.tensor_parallel").
void set_setting(YamlNode& root, const std::string& key, YamlNodePtr value,
                 const YamlMark& key_mark, const std::string& label);

}  // namespace trident

#endif  // TRIDENT_CONFIG_OVERRIDES_H_
