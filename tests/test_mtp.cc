// Multi-token prediction (workload/mtp): one depth's own weights and Megatron-LM's FLOPs for
// it against closed forms, the depth's work and memory on the stage that holds it (the last
// by default, where pipeline_model_parallel_layout's 'm' says otherwise), and the published
// DeepSeek-V3 layout "Et*4|(tttt|)*14tmL" with mtp_num_layers 1.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config/scenario.h"
#include "config_support.h"
#include "workload/moe_model.h"
#include "workload/mtp.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

// scenarios/tiny.yaml: GPT-style (LayerNorm, biases, 4h MLP, tied embeddings), h = 1024,
// a = 16, s = 1024, V = 32000, t = 2, p = 2, d = 2, 8 micro-batches of 1.
constexpr double kH = 1024, kS = 1024, kV = 32000, kSequences = 16;

Scenario tiny(std::vector<std::string> overrides) { return load_scenario(kTiny, overrides); }

double pass_seconds(const ChunkWork& ch) { return ch.forward.compute_s + ch.backward.compute_s; }

}  // namespace

TEST_CASE("mtp: one depth's own weights are its norms, eh_proj and one layer", "[mtp]") {
  const ModelSpec m = tiny({"model.mtp_num_layers=1"}).model;
  // enorm, hnorm, final norm (LayerNorm: 2h each), eh_proj 2h x h, and a GPT layer:
  // QKV 3h^2 + 3h, projection h^2 + h, MLP 8h^2 + 5h, two LayerNorms 4h = 12h^2 + 13h.
  CHECK(mtp_depth_params(m) == 14 * kH * kH + 19 * kH);
  CHECK(mtp_params(m) == mtp_depth_params(m));
  CHECK(mtp_active_params(m) == mtp_depth_params(m));
  const ModelSpec two = tiny({"model.mtp_num_layers=2"}).model;
  CHECK(mtp_params(two) == 2 * mtp_depth_params(m));
  CHECK(mtp_params(tiny({}).model) == 0);

  // DeepSeek-V3 (D = 1): the depth's layer is a MoE layer like the last; the published 685B
  // are the 671B of the main model and 14B of the MTP module, which holds its own copies of
  // the embedding and the output head (2 x 129280 x 7168).
  ModelSpec ds = load_model_file(repo("configs/models/deepseek-v3.yaml"));
  REQUIRE(ds.mtp_num_layers == 1);
  CHECK(mtp_layer_is_moe(ds));
  const double h = ds.hidden_size;
  CHECK(mtp_depth_params(ds) == 3 * h + 2 * h * h + layer_params_at(ds, 60));
  const double module = mtp_params(ds) + 2 * 129280.0 * h;
  CHECK(module / 1e9 == Approx(13.5).margin(0.1));
  CHECK(mtp_active_params(ds) == mtp_params(ds) - (256 - 8) * routed_expert_params(ds));
}

TEST_CASE("mtp: Megatron-LM's FLOPs for the depths equal num_floating_point_operations", "[mtp]") {
  const ModelSpec m = tiny({"model.mtp_num_layers=1"}).model;
  // Per token (3 x 2 per multiply-add): one more layer, QKV and projection 24h^2, the causal
  // core 6hs, the MLP 48h^2; "MTP norms and proj" 6 (3h + 2h^2); one more logits GEMM 6hV.
  const double per_token =
      24 * kH * kH + 6 * kH * kS + 48 * kH * kH + 6 * (3 * kH + 2 * kH * kH) + 6 * kH * kV;
  CHECK(mtp_megatron_flops(m, kSequences) == Approx(kSequences * kS * per_token).epsilon(1e-12));
  CHECK(mtp_megatron_flops(tiny({"model.mtp_num_layers=3"}).model, kSequences) ==
        Approx(3 * kSequences * kS * per_token).epsilon(1e-12));
  CHECK(mtp_megatron_flops(tiny({}).model, kSequences) == 0);
  // The workload's Megatron count adds them to the decoder's.
  const Workload with = build_workload(tiny({"model.mtp_num_layers=1"}));
  const Workload without = build_workload(tiny({}));
  CHECK(with.megatron_flops_per_step - without.megatron_flops_per_step ==
        Approx(kSequences * kS * per_token).epsilon(1e-12));
}

TEST_CASE("mtp: the depth runs, and its weights and activations sit, on the last stage", "[mtp]") {
  const Scenario sc = tiny({"model.mtp_num_layers=1"});
  CHECK(mtp_virtual_stage(sc.model, sc.plan) == 1);
  const Workload with = build_workload(sc);
  const Workload without = build_workload(tiny({}));
  const double depth = 14 * kH * kH + 19 * kH;
  CHECK(with.total_params - without.total_params == depth);
  // Stage 0 is untouched; stage 1 holds the depth's weights / t and a copy of the learned
  // position embedding (the word embedding it uses is the output layer's tied copy there).
  CHECK(with.stages[0].params_per_gpu == without.stages[0].params_per_gpu);
  CHECK(pass_seconds(with.stages[0].chunks[0]) == pass_seconds(without.stages[0].chunks[0]));
  CHECK(with.stages[0].memory.activations == without.stages[0].memory.activations);
  CHECK(with.stages[1].params_per_gpu - without.stages[1].params_per_gpu ==
        Approx(depth / 2 + kS * kH).epsilon(1e-12));
  CHECK(with.stages[1].memory.optimizer > without.stages[1].memory.optimizer);
  CHECK(with.stages[1].memory.activations > without.stages[1].memory.activations);
  const ChunkWork& last = with.stages[1].chunks[0];
  CHECK(pass_seconds(last) > pass_seconds(without.stages[1].chunks[0]));
  CHECK(last.forward.collectives > without.stages[1].chunks[0].forward.collectives);
  // Model FLOPs (MFU) as Megatron-LM counts them: one more layer (72h^2 per token and the
  // attention core halved under the causal mask, 6hs), eh_proj 3 x 2 x 2h^2 and the logits 6hV;
  // the embedding lookup and norms do none.
  const double per_token = 72 * kH * kH + 6 * kH * kS + 12 * kH * kH + 6 * kH * kV;
  CHECK(with.model_flops_per_step - without.model_flops_per_step ==
        Approx(kSequences * kS * per_token).epsilon(1e-12));
  // Full recomputation re-runs the depth's eh_proj (4h^2) and layer forward (24h^2 and the
  // attention's causal half, 2hs), which the hardware FLOPs count as model FLOPs count them and
  // MFU does not.
  const Workload full_with =
      build_workload(tiny({"model.mtp_num_layers=1", "plan.recompute=full"}));
  const Workload full_without = build_workload(tiny({"plan.recompute=full"}));
  CHECK(full_with.model_flops_per_step - full_without.model_flops_per_step ==
        Approx(kSequences * kS * per_token).epsilon(1e-12));
  CHECK(full_with.hardware_flops_per_step - full_without.hardware_flops_per_step ==
        Approx(kSequences * kS * (per_token + 28 * kH * kH + 2 * kH * kS)).epsilon(1e-12));
}

TEST_CASE("mtp: the layout's 'm' places the depth in the last chunk of another rank",
          "[mtp][layout]") {
  // p = 2, v = 2: 'm' in virtual stage 2, the last chunk of pipeline rank 0.
  const Scenario sc =
      tiny({"model.mtp_num_layers=1", "plan.pipeline_model_parallel_layout=Et*3|t*2|t*3m|L",
            "plan.schedule=interleaved-1f1b"});
  CHECK(sc.plan.mtp_virtual_stage == 2);
  CHECK(mtp_virtual_stage(sc.model, sc.plan) == 2);
  const Workload with = build_workload(sc);
  const Workload without = build_workload(tiny(
      {"plan.pipeline_model_parallel_layout=Et*3|t*2|t*3|L", "plan.schedule=interleaved-1f1b"}));
  // Rank 0's second chunk holds the depth and a copy of the embedding (the tied word embedding
  // over t, the learned positions whole) it embeds the shifted tokens with; rank 1 is
  // untouched.
  const double depth = 14 * kH * kH + 19 * kH;
  CHECK(with.stages[0].params_per_gpu - without.stages[0].params_per_gpu ==
        Approx((depth + kV * kH) / 2 + kS * kH).epsilon(1e-12));
  CHECK(with.stages[1].params_per_gpu == without.stages[1].params_per_gpu);
  CHECK(pass_seconds(with.stages[0].chunks[1]) > pass_seconds(without.stages[0].chunks[1]));
  CHECK(pass_seconds(with.stages[0].chunks[0]) == pass_seconds(without.stages[0].chunks[0]));
  CHECK(pass_seconds(with.stages[1].chunks[1]) == pass_seconds(without.stages[1].chunks[1]));
  // As many 'm' as mtp_num_layers (Megatron-Core's validate_layer_layout).
  CHECK_THAT(load_error(kTiny, {"plan.pipeline_model_parallel_layout=Et*3|t*2|t*3m|L",
                                "plan.schedule=interleaved-1f1b"}),
             Catch::Contains("places 1 multi-token-prediction layers ('m'), but "
                             "model.mtp_num_layers is 0"));
  CHECK_THAT(load_error(kTiny, {"model.mtp_num_layers=1",
                                "plan.pipeline_model_parallel_layout=Et*3|t*2|t*3|L",
                                "plan.schedule=interleaved-1f1b"}),
             Catch::Contains("places 0 multi-token-prediction layers ('m'), but "
                             "model.mtp_num_layers is 1"));
}

TEST_CASE("mtp: the published DeepSeek-V3 layout Et*4|(tttt|)*14tmL splits 61 layers",
          "[mtp][layout]") {
  // Megatron-LM's moe_recipes DeepSeek-V3 B200 run: p = 8, 16 virtual stages from the layout
  // (61 layers do not divide by them: the layout gives the split), mtp_num_layers 1.
  const std::string text =
      "cluster: hgx-b200\nmodel: deepseek-v3\noverrides:\n"
      "  cluster.nodes: 32\nplan:\n"
      "  pipeline_parallel: 8\n  expert_model_parallel_size: 32\n"
      "  pipeline_model_parallel_layout: \"Et*4|(tttt|)*14tmL\"\n"
      "  micro_batch_size: 1\n  global_batch_size: 2048\n"
      "  recompute: selective\n  distributed_optimizer: true\n";
  const Scenario sc = load_scenario_text(text, "deepseek.yaml", {});
  CHECK(sc.plan.virtual_stages == 2);
  CHECK(sc.plan.schedule == ScheduleKind::kInterleaved1F1B);
  REQUIRE(sc.plan.pipeline_layers.size() == 16);
  CHECK(sc.plan.pipeline_layers.front() == 4);
  CHECK(sc.plan.pipeline_layers.back() == 1);
  CHECK(sc.plan.mtp_virtual_stage == 15);
  const Workload w = build_workload(sc);
  // The last rank's second chunk: one decoder layer, the MTP depth (a MoE layer) and the loss.
  const ChunkWork& last = w.stages[7].chunks[1];
  CHECK(last.num_layers == 1);
  CHECK(last.has_output);
  CHECK(last.forward.ep_collectives == w.stages[6].chunks[1].forward.ep_collectives / 2);
  // Without the layout's 'm' the model's mtp_num_layers is refused by count.
  CHECK_THAT(load_error(write_temp("ds.yaml", text), {"model.mtp_num_layers=0"}),
             Catch::Contains("model.mtp_num_layers is 0"));
}
