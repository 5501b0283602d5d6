// The variants of `trident compare`: parsed from `--variant name:key=v,...`, or the named
// intra- versus inter-node tensor-parallel placement pair. Pure; no I/O.
#ifndef TRIDENT_CLI_COMPARE_VARIANTS_H_
#define TRIDENT_CLI_COMPARE_VARIANTS_H_

#include <array>
#include <string>
#include <vector>

#include "config/cluster.h"
#include "config/plan.h"

namespace trident {

struct Variant {
  std::string name;
  std::vector<std::string> overrides;  // "key=value", applied as --set after the command's own
};

// Parses "name:key=v[,key=v...]". The name is what precedes a ':' that comes before the first
// '='; without one the whole text names the variant ("plan.tensor_parallel=4"). Overrides are
// split at commas outside brackets ("plan.placement=[data, tensor, pipeline]" stays whole);
// "name:" alone is the scenario unchanged. Each key is checked like --set's.
// Throws ConfigError (file "--variant <text>") on an empty name, a piece without '=' or an
// unknown key.
Variant parse_variant(const std::string& text);

// The placement that spreads each tensor-parallel group over different NVLink islands
// (nodes, on a cluster whose island is a node) where the plan allows it: TP ranks sit
// `stride` ranks apart, so they share an island only when that stride is below the island
// size. In order of preference:
//   [data, tensor, pipeline]  when data >= island size (TP stride d; stages stay outermost),
//   [pipeline, tensor, data]  when pipeline >= island size (TP stride p),
//   [data, pipeline, tensor]  otherwise (TP stride d*p, the widest spread there is).
std::vector<ParallelDim> inter_node_tp_placement(const PlanSpec& plan, const ClusterSpec& cluster);

// "[tensor, data, pipeline]": a placement as a YAML flow list, for --set.
std::string placement_text(const std::vector<ParallelDim>& placement);

// The `--tp-placement` variants for `names` (a comma-separated list of "intra" and "inter", in
// the order given; the first is the baseline): intra = [tensor, data, pipeline], inter =
// inter_node_tp_placement(). Throws ConfigError (file "--tp-placement") on another name, a
// repeat or an empty list.
std::vector<Variant> tp_placement_variants(const std::string& names, const PlanSpec& plan,
                                           const ClusterSpec& cluster);

}  // namespace trident

#endif  // TRIDENT_CLI_COMPARE_VARIANTS_H_
