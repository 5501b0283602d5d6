// Megatron-Core's pipeline layout and embedding/loss-aware split (config/pipeline_layout).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config/megatron_args.h"
#include "config/pipeline_layout.h"
#include "config/scenario.h"
#include "config_support.h"

namespace trident {
namespace {

std::vector<int> layout_layers(const std::string& text, int p, int* v = nullptr) {
  std::string why;
  const auto layout = parse_pipeline_layout(text, p, &why);
  INFO(why);
  REQUIRE(layout);
  if (v) *v = layout->virtual_stages;
  return layout->decoder_layers;
}

std::string layout_error(const std::string& text, int p) {
  std::string why;
  CHECK_FALSE(parse_pipeline_layout(text, p, &why));
  return why;
}

}  // namespace

TEST_CASE("pipeline layout: the DeepSeek-V3 GB200 layout of the Megatron-Core guide",
          "[validate][layout]") {
  // Et|(tt|)*30L on p = 8: 32 virtual stages, v = 4; 1 + 60 decoder layers; the last holds
  // only the loss.
  int v = 0;
  const std::vector<int> layers = layout_layers("Et|(tt|)*30L", 8, &v);
  CHECK(v == 4);
  REQUIRE(layers.size() == 32);
  CHECK(layers.front() == 1);
  CHECK(layers.back() == 0);
  for (size_t i = 1; i + 1 < layers.size(); ++i) CHECK(layers[i] == 2);
}

TEST_CASE("pipeline layout: repeats, commas and nested groups expand as Megatron's parser does",
          "[validate][layout]") {
  // The parser's own docstring example without the MTP layer: Ettt|(tt|)*29,|L.
  std::vector<int> layers = layout_layers("Ettt|(tt|)*29,|L", 16);
  REQUIRE(layers.size() == 32);
  CHECK(layers[0] == 3);
  CHECK(layers[30] == 0);
  CHECK(layers[31] == 0);
  CHECK(layout_layers("E t*3 | t , t | t | L", 2) == std::vector<int>{3, 2, 1, 0});
  CHECK(layout_layers("E(t|)*2(tt|)*2L", 5) == std::vector<int>{1, 1, 2, 2, 0});
  CHECK(layout_error("E((t|)*2t|)*2L", 3).find("nests groups") == 0);
}

TEST_CASE("pipeline layout: malformed layouts name what is wrong", "[validate][layout]") {
  CHECK(layout_error("tE|tL", 2) == "must open with the embedding 'E', exactly once");
  CHECK(layout_error("Et|tL|L", 3) == "must close with the loss 'L', exactly once");
  CHECK(layout_error("Et|(tt|*2L", 2) == "has '(' without ')'");
  CHECK(layout_error("Et|(tt|)L", 2) ==
        "has a group \"(tt|)\" without a repeat count (expected (...)*N)");
  CHECK(layout_error("E*2t|tL", 2).find("expands") == std::string::npos);
  CHECK(layout_error("Et|t|tL", 2) ==
        "has 3 stages, not a multiple of pipeline_parallel 2 (expected pipeline_parallel × "
        "virtual stages)");
  CHECK(layout_error("Etm|tL", 2).find("after a multi-token-prediction layer") !=
        std::string::npos);
  CHECK(layout_error("*3Et|tL", 2).find("'*'") != std::string::npos);
}

TEST_CASE("pipeline layout: multi-token-prediction layers 'm' follow Megatron-Core's rules",
          "[validate][layout][mtp]") {
  std::string why;
  // The moe_recipes DeepSeek-V3 layout: 16 virtual stages, the MTP layer beside the last
  // decoder layer and the loss.
  auto layout = parse_pipeline_layout("Et*4|(tttt|)*14tmL", 8, &why);
  REQUIRE(layout);
  CHECK(layout->virtual_stages == 2);
  CHECK(layout->mtp_stage == 15);
  CHECK(layout->mtp_layers == 1);
  CHECK(layout->decoder_layers.back() == 1);
  // Two depths alone in the last chunk of rank 0 (Megatron's "standalone" MTP).
  layout = parse_pipeline_layout("Et|t|tmm|L", 2, &why);
  REQUIRE(layout);
  CHECK(layout->mtp_stage == 2);
  CHECK(layout->mtp_layers == 2);
  layout = parse_pipeline_layout("Et|tL", 2, &why);
  REQUIRE(layout);
  CHECK(layout->mtp_layers == 0);
  CHECK(layout->mtp_stage == -1);
  CHECK(layout_error("Et|tm||L", 2) ==
        "places multi-token-prediction layers 'm' in virtual stage 1, chunk 0 of pipeline rank 1 "
        "(expected the last chunk of a rank, as Megatron-LM requires)");
  CHECK(layout_error("Et|tm|m|L", 2).find("more than one virtual stage") != std::string::npos);
  CHECK(layout_error("Em|t|t|tL", 2).find("'t' after") != std::string::npos);
}

TEST_CASE("accounted split: the embedding and the loss each take one layer's slot",
          "[validate][layout]") {
  std::string why;
  // Qwen3-235B-A22B (94 layers) on p = 16 with both: 96 slots, 6 per stage.
  auto split = accounted_split(94, 16, 1, true, true, &why);
  REQUIRE(split);
  CHECK(split->front() == 5);
  CHECK(split->back() == 5);
  CHECK((*split)[1] == 6);
  int sum = 0;
  for (int n : *split) sum += n;
  CHECK(sum == 94);
  // Interleaved: only the first and the last virtual stage give a slot.
  split = accounted_split(62, 4, 2, true, true, &why);
  REQUIRE(split);
  CHECK(*split == std::vector<int>{7, 8, 8, 8, 8, 8, 8, 7});
  CHECK_FALSE(accounted_split(96, 8, 1, true, false, &why));
  CHECK(why ==
        "num_layers 96 + 1 (embedding) = 97 is not divisible by pipeline_parallel × "
        "virtual_stages = 8");
}

TEST_CASE("pipeline layout in a scenario: virtual stages, schedule and the split follow",
          "[validate][layout]") {
  const std::string scenario = testing::repo("scenarios/gpt3-175b-3d.yaml");
  Scenario s = load_scenario(scenario, {"plan.pipeline_model_parallel_layout=E(t*6|)*14t*11|tL",
                                        "plan.schedule=interleaved-1f1b"});
  CHECK(s.plan.virtual_stages == 2);
  REQUIRE(s.plan.pipeline_layers.size() == 16);
  CHECK(s.plan.pipeline_layers[14] == 11);
  CHECK(s.plan.pipeline_layers[15] == 1);
  s = load_scenario(scenario,
                    {"plan.account_for_embedding_in_pipeline_split=true",
                     "plan.account_for_loss_in_pipeline_split=true", "plan.pipeline_parallel=14",
                     "plan.data_parallel=8", "plan.tensor_parallel=8"});
  CHECK(s.plan.pipeline_layers.front() == 6);
  CHECK(s.plan.pipeline_layers.back() == 6);
  CHECK(s.plan.pipeline_layers[1] == 7);
}

TEST_CASE("pipeline layout from a Megatron-LM launch line", "[validate][layout][megatron]") {
  // The DeepSeek-V3 GB200 guide's layout on a 61-layer model, quoted as a shell passes it.
  const std::string line =
      "torchrun pretrain_gpt.py --num-layers 61 --hidden-size 4096 --num-attention-heads 32 "
      "--ffn-hidden-size 14336 --seq-length 4096 --vocab-size 32000 --swiglu "
      "--tensor-model-parallel-size 1 --pipeline-model-parallel-size 8 "
      "--pipeline-model-parallel-layout 'Et|(tt|)*30L' --micro-batch-size 1 "
      "--global-batch-size 2048 --bf16";
  const MegatronScenario t = translate_megatron_args(line, "line.sh", "dgx-h100");
  const Scenario sc = load_scenario_text(t.yaml, "line.sh", {});
  CHECK(sc.plan.virtual_stages == 4);
  CHECK(sc.plan.schedule == ScheduleKind::kInterleaved1F1B);
  REQUIRE(sc.plan.pipeline_layers.size() == 32);
  CHECK(sc.plan.pipeline_layers.front() == 1);
  CHECK(sc.plan.pipeline_layers.back() == 0);
}

}  // namespace trident
