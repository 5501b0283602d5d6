#include "cli/compare_variants.h"

#include "cli/sweep_points.h"
#include "config/schema.h"
#include "core/errors.h"
#include "core/text.h"

namespace trident {
namespace {

ConfigError error_at(const std::string& label, const std::string& key, const std::string& what) {
  SourceLocation where;
  where.file = label;
  where.key = key;
  return ConfigError(where, what);
}

}  // namespace

Variant parse_variant(const std::string& text) {
  const std::string label = "--variant " + text;
  Variant v;
  const size_t colon = text.find(':');
  const size_t eq = text.find('=');
  std::string list = text;
  if (colon != std::string::npos && (eq == std::string::npos || colon < eq)) {
    v.name = trim(text.substr(0, colon));
    list = text.substr(colon + 1);
    if (v.name.empty()) {
      throw error_at(label, "", "empty variant name (expected name:key=v[,key=v...])");
    }
  } else {
    v.name = trim(text);
  }
  for (const std::string& piece : split_top_level(list)) {
    const size_t e = piece.find('=');
    if (e == std::string::npos || e == 0) {
      throw error_at(
          label, "",
          "expected key=value, got '" + piece + "' (e.g. --variant t4:plan.tensor_parallel=4)");
    }
    const std::string key = trim(piece.substr(0, e));
    const std::string error = schema_path_error(key);
    if (!error.empty()) throw error_at(label, key, error);
    v.overrides.push_back(piece);
  }
  if (v.overrides.empty() && colon == std::string::npos) {
    throw error_at(label, "", "expected name:key=v[,key=v...]");
  }
  return v;
}

std::vector<ParallelDim> inter_node_tp_placement(const PlanSpec& plan, const ClusterSpec& cluster) {
  const int island =
      cluster.nvlink.island_size > 0 ? cluster.nvlink.island_size : cluster.gpus_per_node;
  using D = ParallelDim;
  if (plan.data >= island) return {D::kData, D::kTensor, D::kPipeline};
  if (plan.pipeline >= island) return {D::kPipeline, D::kTensor, D::kData};
  return {D::kData, D::kPipeline, D::kTensor};
}

std::string placement_text(const std::vector<ParallelDim>& placement) {
  std::string out = "[";
  for (size_t i = 0; i < placement.size(); ++i) {
    out += std::string(i ? ", " : "") + parallel_dim_name(placement[i]);
  }
  return out + "]";
}

std::vector<Variant> tp_placement_variants(const std::string& names, const PlanSpec& plan,
                                           const ClusterSpec& cluster) {
  const std::string label = "--tp-placement " + names;
  std::vector<Variant> out;
  for (const std::string& name : split_top_level(names)) {
    std::vector<ParallelDim> placement;
    if (name == "intra") {
      placement = {ParallelDim::kTensor, ParallelDim::kData, ParallelDim::kPipeline};
    } else if (name == "inter") {
      placement = inter_node_tp_placement(plan, cluster);
    } else {
      throw error_at(label, "", "expected intra and/or inter, got '" + name + "'");
    }
    for (const Variant& v : out) {
      if (v.name == name) throw error_at(label, "", "'" + name + "' given twice");
    }
    out.push_back({name, {"plan.placement=" + placement_text(placement)}});
  }
  if (out.empty()) throw error_at(label, "", "expected intra,inter");
  return out;
}

}  // namespace trident
