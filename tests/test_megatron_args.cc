// Megatron-LM launch lines translated into scenarios (config/megatron_args.h): a realistic
// Llama 3 70B line, the launcher's --nnodes, virtual stages, vocabulary padding, and the
// arguments refused (changing the step, not modelled) or unknown.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "config/megatron_args.h"
#include "config/scenario.h"
#include "config/shell_words.h"
#include "core/errors.h"

using namespace trident;

namespace {

std::string repo(const std::string& rel) { return std::string(TRIDENT_SOURCE_DIR) + "/" + rel; }

std::string read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string translate_error(const std::string& text) {
  try {
    translate_megatron_args(text, "line.sh", "dgx-h100");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

const char* const kMinimal =
    "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
    "--vocab-size 32000 --micro-batch-size 1 --global-batch-size 64 --bf16 ";

}  // namespace

TEST_CASE("shell words: quotes, continuations, comments, lines", "[megatron]") {
  const auto words = split_shell_words("a \\\n  'b c' \"d\"e # note\nf\\ g", "x");
  REQUIRE(words.size() == 4);
  CHECK(words[0].text == "a");
  CHECK(words[1].text == "b c");
  CHECK(words[1].line == 2);
  CHECK(words[2].text == "de");
  CHECK(words[3].text == "f g");
  CHECK(words[3].line == 3);
  CHECK_THROWS_AS(split_shell_words("'open", "x"), ConfigError);
}

TEST_CASE("a Llama 3 70B launch line becomes the shipped scenario's plan on 64 nodes",
          "[megatron]") {
  const std::string path = repo("tests/data/megatron/llama3-70b.sh");
  const MegatronScenario t = translate_megatron_args(read(path), path, "dgx-h100");
  const Scenario s = load_scenario_text(t.yaml, path, {});
  const Scenario shipped = load_scenario(repo("scenarios/llama3-70b-dgx-h100.yaml"), {});
  CHECK(s.cluster.total_gpus() == 512);  // torchrun --nnodes 64 x 8
  CHECK(s.plan.tensor == 8);
  CHECK(s.plan.pipeline == 4);
  CHECK(s.plan.data == 16);
  CHECK(s.plan.num_microbatches == 64);
  CHECK(s.plan.sequence_parallel);
  CHECK(s.plan.distributed_optimizer);
  CHECK(s.plan.overlap_grad_reduce);
  CHECK(s.plan.recompute == shipped.plan.recompute);
  CHECK(s.plan.precision == Precision::kBf16);
  CHECK(s.plan.schedule == ScheduleKind::k1F1B);
  CHECK(s.model.num_layers == 80);
  CHECK(s.model.num_query_groups == 8);
  CHECK(s.model.ffn_hidden_size == 28672);
  CHECK(s.model.swiglu);
  CHECK(s.model.untie_embeddings_and_output_weights);
  CHECK(s.model.vocab_size == 129024);  // 128256 padded to a multiple of 128 x t
  // Logging, data, checkpoints, optimizer and seeds are listed as ignored.
  const std::string ignored = [&] {
    std::string all;
    for (const std::string& a : t.ignored) all += a + "\n";
    return all;
  }();
  for (const char* a : {"--lr 1.5e-4", "--data-path", "--save ", "--seed 1234", "--log-interval",
                        "--tensorboard-dir"}) {
    CHECK_THAT(ignored, Catch::Contains(a));
  }
  // Norms, dropout and the attention backend change the step: taken, not ignored.
  CHECK(ignored.find("--normalization") == std::string::npos);
  CHECK(s.model.rms_norm);
  CHECK(s.model.attention_dropout == 0);
  CHECK(s.plan.attention_backend == AttentionBackend::kFused);
}

TEST_CASE("virtual pipeline stages and precision", "[megatron]") {
  const std::string base = std::string(kMinimal) + "--pipeline-model-parallel-size 4 ";
  MegatronScenario t =
      translate_megatron_args(base + "--num-layers-per-virtual-pipeline-stage 2", "l", "x");
  CHECK_THAT(t.yaml, Catch::Contains("virtual_stages: 4\n"));
  CHECK_THAT(t.yaml, Catch::Contains("schedule: interleaved-1f1b\n"));
  t = translate_megatron_args(base + "--num-virtual-stages-per-pipeline-rank 2", "l", "x");
  CHECK_THAT(t.yaml, Catch::Contains("virtual_stages: 2\n"));
  t = translate_megatron_args(std::string(kMinimal) + "--fp8-format hybrid", "l", "x");
  CHECK_THAT(t.yaml, Catch::Contains("precision: fp8\n"));
  t = translate_megatron_args(std::string(kMinimal) + "--num_query_groups=4", "l", "x");
  CHECK(t.yaml.find("num_query_groups") == std::string::npos);  // needs GQA on
  CHECK_THAT(translate_error(base + "--num-layers-per-virtual-pipeline-stage 3"),
             Catch::Contains("does not divide"));
}

TEST_CASE("arguments that change the step but are not modelled are refused, each named",
          "[megatron]") {
  const std::string error = translate_error(
      std::string(kMinimal) + "--encoder-num-layers 2 --cp-comm-type a2a+p2p --frobnicate 3");
  CHECK_THAT(error, Catch::StartsWith("line.sh:1:149: --encoder-num-layers: changes the step but "
                                      "is not modelled, refused: --encoder-num-layers"));
  for (const char* a : {"--encoder-num-layers", "--cp-comm-type a2a+p2p",
                        "unknown to trident, refused: --frobnicate"}) {
    CHECK_THAT(error, Catch::Contains(a));
  }
  CHECK_THAT(translate_error("--num-layers 2 --micro-batch-size 1"),
             Catch::Contains("missing --hidden-size"));
  CHECK_THAT(translate_error("--num-layers 2 --hidden-size 64 --num-attention-heads 2 "
                             "--seq-length 64 --micro-batch-size 1"),
             Catch::Contains("missing --vocab-size"));
}

TEST_CASE("attention backends, dropout, norms and FP8 recipes translate", "[megatron]") {
  const std::string base = std::string(kMinimal);
  CHECK_THAT(translate_megatron_args(base + "--use-flash-attn", "l", "x").yaml,
             Catch::Contains("attention_backend: flash"));
  CHECK_THAT(translate_megatron_args(base + "--attention-backend local", "l", "x").yaml,
             Catch::Contains("attention_backend: unfused"));
  CHECK_THAT(translate_megatron_args(base + "--attention-backend fused", "l", "x").yaml,
             Catch::Contains("attention_backend: fused"));
  CHECK(translate_megatron_args(base, "l", "x").yaml.find("attention_backend") ==
        std::string::npos);  // Megatron's auto is trident's default
  const std::string yaml =
      translate_megatron_args(base +
                                  "--attention-dropout 0.0 --hidden-dropout 0.0 "
                                  "--normalization RMSNorm --fp8-format hybrid "
                                  "--fp8-recipe tensorwise --fp8-dot-product-attention",
                              "l", "x")
          .yaml;
  CHECK_THAT(yaml, Catch::Contains("attention_dropout: 0.0"));
  CHECK_THAT(yaml, Catch::Contains("normalization: RMSNorm"));
  CHECK_THAT(yaml, Catch::Contains("fp8_recipe: tensorwise"));
  CHECK_THAT(yaml, Catch::Contains("fp8_attention: true"));
  CHECK_THAT(translate_error(base + "--attention-backend sparse"),
             Catch::Contains("--attention-backend sparse (line 1; expected flash, fused"));
}

TEST_CASE("recompute modules and CUDA graphs: the modules become plan.recompute_modules",
          "[megatron]") {
  // --recompute-modules takes several words (nargs='+'); core_attn is Megatron's default.
  const MegatronScenario t = translate_megatron_args(
      std::string(kMinimal) +
          "--recompute-granularity selective --recompute-modules core_attn "
          "--cuda-graph-impl transformer_engine --cuda-graph-scope attn mlp",
      "line.sh", "dgx-h100");
  CHECK_THAT(t.yaml, Catch::Contains("recompute: selective\n"));
  CHECK_THAT(t.yaml, Catch::Contains("recompute_modules: [core_attn]\n"));
  // CUDA graphs become plan.cuda_graph_impl and cuda_graph_scope (workload/host_launch.h).
  CHECK_THAT(t.yaml, Catch::Contains("cuda_graph_impl: transformer_engine\n"));
  CHECK_THAT(t.yaml, Catch::Contains("cuda_graph_scope: [attn, mlp]\n"));
  const Scenario graphed =
      load_scenario_text(translate_megatron_args(
                             "torchrun --nnodes 1 pretrain_gpt.py " + std::string(kMinimal) +
                                 "--cuda-graph-impl transformer_engine --cuda-graph-scope attn mlp",
                             "line.sh", "dgx-h100")
                             .yaml,
                         "line.sh", {});
  CHECK(graphed.plan.cuda_graph_impl == CudaGraphImpl::kTransformerEngine);
  CHECK(graphed.plan.cuda_graph_scope == (kGraphAttn | kGraphMlp));
  // The older flags, and full_iteration as an impl.
  CHECK_THAT(
      translate_megatron_args(std::string(kMinimal) + "--enable-cuda-graph", "line.sh", "dgx-h100")
          .yaml,
      Catch::Contains("cuda_graph_impl: local\n"));
  const MegatronScenario whole = translate_megatron_args(
      std::string(kMinimal) + "--cuda-graph-impl full_iteration", "line.sh", "dgx-h100");
  CHECK_THAT(whole.yaml, Catch::Contains("cuda_graph_scope: [full_iteration]\n"));
  CHECK_THAT(translate_error(std::string(kMinimal) + "--cuda-graph-impl sometimes"),
             Catch::Contains("--cuda-graph-impl sometimes (line 1; expected none, local"));
  const MegatronScenario more = translate_megatron_args(
      "torchrun --nnodes 1 pretrain_gpt.py " + std::string(kMinimal) +
          "--recompute-granularity selective --recompute-modules core_attn mlp layernorm "
          "--use-distributed-optimizer",
      "line.sh", "dgx-h100");
  CHECK_THAT(more.yaml, Catch::Contains("recompute_modules: [core_attn, mlp, layernorm]\n"));
  CHECK(load_scenario_text(more.yaml, "line.sh", {}).plan.recompute_modules ==
        (kRecomputeCoreAttn | kRecomputeMlp | kRecomputeLayernorm));
  // Without selective granularity Megatron ignores the modules.
  const MegatronScenario full =
      translate_megatron_args(std::string(kMinimal) +
                                  "--recompute-granularity full --recompute-method uniform "
                                  "--recompute-num-layers 1 --recompute-modules mlp",
                              "line.sh", "dgx-h100");
  CHECK_THAT(full.yaml, Catch::Contains("recompute: full\n"));
}

TEST_CASE("NVFP4 and optimizer CPU offload arguments translate", "[megatron][nvfp4][offload]") {
  const MegatronScenario m = translate_megatron_args(
      std::string(kMinimal) +
          "--fp4-format e2m1 --fp4-recipe nvfp4 --first-last-layers-bf16 "
          "--num-layers-at-start-in-bf16 2 --num-layers-at-end-in-bf16 3 "
          "--use-distributed-optimizer --use-precision-aware-optimizer --optimizer-cpu-offload "
          "--optimizer-offload-fraction 0.5 --overlap-cpu-optimizer-d2h-h2d "
          "--use-torch-optimizer-for-cpu-offload",
      "l", "x");
  CHECK_THAT(m.yaml, Catch::Contains("precision: fp4"));
  CHECK_THAT(m.yaml, Catch::Contains("fp4_recipe: nvfp4"));
  CHECK_THAT(m.yaml, Catch::Contains("first_last_layers_bf16: true"));
  CHECK_THAT(m.yaml, Catch::Contains("num_layers_at_start_in_bf16: 2"));
  CHECK_THAT(m.yaml, Catch::Contains("num_layers_at_end_in_bf16: 3"));
  CHECK_THAT(m.yaml, Catch::Contains("optimizer_cpu_offload: true"));
  CHECK_THAT(m.yaml, Catch::Contains("optimizer_offload_fraction: 0.5"));
  CHECK_THAT(m.yaml, Catch::Contains("overlap_cpu_optimizer_d2h_h2d: true"));
  bool ignored = false;
  for (const std::string& i : m.ignored) {
    ignored |= i.find("--use-torch-optimizer-for-cpu-offload") != std::string::npos;
  }
  CHECK(ignored);
}

TEST_CASE("delayed scaling's amax knobs are accepted as no-ops, their values checked",
          "[megatron]") {
  const std::string base = std::string(kMinimal) + "--fp8-format hybrid --fp8-recipe delayed ";
  const MegatronScenario t = translate_megatron_args(
      base + "--fp8-amax-history-len 1024 --fp8-amax-compute-algo max --fp8-margin 0", "l", "x");
  CHECK_THAT(t.yaml, Catch::Contains("precision: fp8\n"));
  CHECK(t.yaml.find("amax") == std::string::npos);  // no setting: the step is the same
  std::string ignored;
  for (const std::string& a : t.ignored) ignored += a + "\n";
  CHECK_THAT(ignored, Catch::Contains("--fp8-amax-history-len 1024 (delayed scaling's amax"));
  CHECK_THAT(ignored, Catch::Contains("--fp8-amax-compute-algo max (delayed scaling's amax"));
  CHECK_THAT(ignored, Catch::Contains("--fp8-margin 0 (the scaling margin"));
  // The same step as without them.
  CHECK(translate_megatron_args(base, "l", "x").yaml == t.yaml);
  CHECK_THAT(translate_error(base + "--fp8-amax-compute-algo mean"),
             Catch::Contains("--fp8-amax-compute-algo mean (line 1; expected max or most_recent)"));
  CHECK_THAT(translate_error(base + "--fp8-amax-history-len 0"),
             Catch::Contains("--fp8-amax-history-len 0 (line 1; expected an integer >= 1)"));
}

TEST_CASE("recipe flags map to their settings instead of being ignored", "[megatron]") {
  const MegatronScenario t = translate_megatron_args(
      "torchrun --nnodes 1 pretrain_gpt.py " + std::string(kMinimal) +
          "--swiglu --ffn-hidden-size 11008 --disable-bias-linear --qk-layernorm "
          "--position-embedding-type rope --rotary-base 1000000 --rotary-scaling-factor 8 "
          "--use-megatron-fsdp --use-distributed-optimizer",
      "line.sh", "dgx-h100");
  const Scenario sc = load_scenario_text(t.yaml, "line.sh", {});
  CHECK_FALSE(sc.model.linear_biases());
  CHECK(sc.model.qk_layernorm);
  CHECK(sc.model.rotary_base == 1000000);
  CHECK(sc.model.rotary_scaling_factor == 8);
  CHECK(sc.plan.dp_sharding == DpSharding::kOptimGradsParams);
  for (const std::string& i : t.ignored) {
    CHECK(i.rfind("--disable-bias-linear", 0) != 0);
    CHECK(i.rfind("--qk-layernorm", 0) != 0);
    CHECK(i.rfind("--use-megatron-fsdp", 0) != 0);
  }
  // Megatron's default: biases unless --disable-bias-linear.
  const Scenario biased = load_scenario_text(
      translate_megatron_args("torchrun --nnodes 1 pretrain_gpt.py " + std::string(kMinimal) +
                                  "--swiglu --ffn-hidden-size 11008",
                              "l", "dgx-h100")
          .yaml,
      "l", {});
  CHECK(biased.model.linear_biases());
  // Blocking p2p with interleaving, and offloaded activations, are refused by the loader.
  const MegatronScenario p2p = translate_megatron_args(
      std::string(kMinimal) +
          "--pipeline-model-parallel-size 4 --num-layers-per-virtual-pipeline-stage 4 "
          "--no-overlap-p2p-communication",
      "line.sh", "dgx-h100");
  CHECK_THAT(p2p.yaml, Catch::Contains("overlap_p2p_comm: false\n"));
  const MegatronScenario offload = translate_megatron_args(
      std::string(kMinimal) + "--fine-grained-activation-offloading --offload-modules expert_fc1",
      "line.sh", "dgx-h100");
  CHECK_THAT(offload.yaml, Catch::Contains("activation_offload: [expert_fc1]\n"));
}
