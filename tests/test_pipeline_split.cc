// Uneven pipeline splits (config/pipeline_split): pipeline_layers, decoder_first/last and the
// balanced splits proposed for layers that do not divide.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config/pipeline_split.h"
#include "config_support.h"

using namespace trident;
using namespace trident::testing;

TEST_CASE("an uneven split: pipeline_layers and decoder_first/last", "[validate][split]") {
  const std::string scenario = repo("scenarios/gpt3-175b-3d.yaml");
  Scenario s = load_scenario(scenario, {"plan.pipeline_layers=[11, 12, 12, 13, 13, 12, 12, 11]"});
  CHECK(s.plan.pipeline_layers == std::vector<int>{11, 12, 12, 13, 13, 12, 12, 11});

  s = load_scenario(scenario, {"plan.decoder_first_pipeline_num_layers=6",
                               "plan.decoder_last_pipeline_num_layers=6"});
  CHECK(s.plan.pipeline_layers == std::vector<int>{6, 14, 14, 14, 14, 14, 14, 6});

  // Only the first given: the other seven stages share the rest.
  s = load_scenario(scenario, {"plan.decoder_first_pipeline_num_layers=5"});
  CHECK(s.plan.pipeline_layers == std::vector<int>{5, 13, 13, 13, 13, 13, 13, 13});

  // Interleaved: each stage's layers split over its chunks; chunk c of stage s at c * p + s.
  s = load_scenario(scenario, {"plan.schedule=interleaved-1f1b", "plan.virtual_stages=2",
                               "plan.decoder_first_pipeline_num_layers=6",
                               "plan.decoder_last_pipeline_num_layers=6"});
  CHECK(s.plan.pipeline_layers == std::vector<int>{3, 7, 7, 7, 7, 7, 7, 3, 3, 7, 7, 7, 7, 7, 7, 3});

  // Setting one way of splitting drops the other.
  s = load_scenario(scenario, {"plan.decoder_first_pipeline_num_layers=6",
                               "plan.pipeline_layers=[12, 12, 12, 12, 12, 12, 12, 12]"});
  CHECK(s.plan.pipeline_layers == std::vector<int>(8, 12));

  CHECK_THAT(load_error(scenario, {"plan.decoder_first_pipeline_num_layers=7",
                                   "plan.decoder_last_pipeline_num_layers=7"}),
             Catch::Contains("--set plan.decoder_first_pipeline_num_layers=7: "
                             "plan.decoder_first_pipeline_num_layers: cannot split the layers: "
                             "leaves 82 of model.num_layers 96"));
}

TEST_CASE("split proposals for models whose layers do not divide", "[validate][split]") {
  CHECK(balanced_split(70, 12, 1) == std::vector<int>{5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5});
  CHECK(balanced_split(70, 8, 1) == std::vector<int>{8, 9, 9, 9, 9, 9, 9, 8});
  CHECK(balanced_split(10, 4, 1) == std::vector<int>{2, 3, 3, 2});
  CHECK(propose_split(70, 12, 1) ==
        "pipeline_layers: [5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5] or "
        "decoder_first_pipeline_num_layers: 5, decoder_last_pipeline_num_layers: 5");
  CHECK(propose_split(7, 2, 1) == "pipeline_layers: [3, 4]");
  for (int layers : {7, 70, 95, 126, 1000}) {
    for (int p : {2, 3, 5, 7}) {
      for (int v : {1, 2, 3}) {
        if (layers < p * v) continue;
        const std::vector<int> split = balanced_split(layers, p, v);
        int sum = 0;
        for (int n : split) sum += n;
        CHECK(sum == layers);
        CHECK(split.size() == static_cast<size_t>(p * v));
      }
    }
  }
  std::string why;
  CHECK_FALSE(first_last_split(96, 1, 1, 5, std::nullopt, &why));
  CHECK_THAT(why, Catch::Contains("needs pipeline_parallel >= 2"));
  CHECK(first_last_split(10, 2, 1, 4, 6, &why) == std::vector<int>{4, 6});
  CHECK_FALSE(first_last_split(10, 2, 1, 4, 5, &why));
}
