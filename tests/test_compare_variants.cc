// Variants of `trident compare` (cli/compare_variants): names and overrides, and TP placements
// within or across islands.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cli/compare_variants.h"
#include "core/errors.h"

using namespace trident;

TEST_CASE("variants parse names and overrides", "[compare]") {
  const Variant v =
      parse_variant("inter:plan.placement=[data, tensor, pipeline],plan.data_parallel=2");
  CHECK(v.name == "inter");
  CHECK(v.overrides == std::vector<std::string>{"plan.placement=[data, tensor, pipeline]",
                                                "plan.data_parallel=2"});
  CHECK(parse_variant("plan.tensor_parallel=4").name == "plan.tensor_parallel=4");
  CHECK(parse_variant("base:").overrides.empty());
  CHECK_THROWS_AS(parse_variant(":plan.tensor_parallel=4"), ConfigError);
  CHECK_THROWS_AS(parse_variant("x:plan.tensor_parallel"), ConfigError);
  CHECK_THROWS_AS(parse_variant("x:plan.tensorparallel=4"), ConfigError);
}

TEST_CASE("inter-node TP placement spreads TP ranks over islands", "[compare]") {
  ClusterSpec cluster;
  cluster.gpus_per_node = 8;
  cluster.nvlink.island_size = 8;
  PlanSpec plan;
  plan.tensor = 8;
  plan.pipeline = 1;
  plan.data = 8;
  CHECK(placement_text(inter_node_tp_placement(plan, cluster)) == "[data, tensor, pipeline]");
  plan.data = 2;
  plan.pipeline = 8;
  CHECK(placement_text(inter_node_tp_placement(plan, cluster)) == "[pipeline, tensor, data]");
  plan.pipeline = 2;
  CHECK(placement_text(inter_node_tp_placement(plan, cluster)) == "[data, pipeline, tensor]");
  const std::vector<Variant> vs = tp_placement_variants("intra,inter", plan, cluster);
  REQUIRE(vs.size() == 2);
  CHECK(vs[0].overrides[0] == "plan.placement=[tensor, data, pipeline]");
  CHECK(vs[1].name == "inter");
  CHECK_THROWS_AS(tp_placement_variants("intra,across", plan, cluster), ConfigError);
  CHECK_THROWS_AS(tp_placement_variants("intra,intra", plan, cluster), ConfigError);
}
