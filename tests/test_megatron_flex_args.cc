// Megatron-LM launch lines with the flex (DeepEP) dispatcher and group-limited routing
// (config/megatron_args): the DeepSeek-V3-style recipes of Megatron-Core 2025-26.
#include <catch2/catch.hpp>
#include <string>

#include "config/megatron_args.h"
#include "config/scenario.h"
#include "core/errors.h"

using namespace trident;

namespace {

// A DeepSeek-V3-like recipe, trimmed: 256 experts, top-8 in 4 of 8 groups, EP 64 over 8
// nodes, flex with DeepEP, and the router flags such recipes carry.
const char* const kDeepSeek =
    "torchrun --nnodes 128 pretrain_gpt.py --num-layers 61 --hidden-size 7168 "
    "--num-attention-heads 128 --ffn-hidden-size 18432 --seq-length 4096 --vocab-size 129280 "
    "--swiglu --position-embedding-type rope --untie-embeddings-and-output-weights "
    "--normalization RMSNorm --attention-dropout 0 --hidden-dropout 0 "
    "--multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128 "
    "--qk-pos-emb-head-dim 64 --v-head-dim 128 --kv-channels 128 "
    "--num-experts 256 --moe-router-topk 8 --moe-ffn-hidden-size 2048 "
    "--moe-shared-expert-intermediate-size 2048 --moe-layer-freq ([0]*3+[1]*58) "
    "--moe-router-num-groups 8 --moe-router-group-topk 4 --moe-grouped-gemm "
    "--moe-router-score-function sigmoid --moe-router-enable-expert-bias "
    "--moe-router-bias-update-rate 1e-3 --moe-router-topk-scaling-factor 2.5 "
    "--moe-router-dtype fp32 --moe-router-load-balancing-type seq_aux_loss "
    "--moe-aux-loss-coeff 1e-4 --moe-z-loss-coeff 0 --moe-permute-fusion --moe-router-fusion "
    "--moe-token-drop-policy probs --moe-router-pre-softmax --moe-deepep-num-sms 20 "
    "--expert-model-parallel-size 64 --pipeline-model-parallel-size 16 "
    "--decoder-last-pipeline-num-layers 1 "
    "--micro-batch-size 1 --global-batch-size 1024 --bf16 --use-distributed-optimizer";

std::string translate_error(const std::string& text) {
  try {
    translate_megatron_args(text, "line.sh", "dgx-h100");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a flex (DeepEP) launch line with group-limited routing is taken", "[megatron][flex]") {
  for (const char* backend : {" --moe-enable-deepep", " --moe-flex-dispatcher-backend deepep"}) {
    INFO(backend);
    const std::string line = std::string(kDeepSeek) + " --moe-token-dispatcher-type flex" + backend;
    const MegatronScenario t = translate_megatron_args(line, "ds.sh", "dgx-h100");
    const Scenario sc = load_scenario_text(t.yaml, "ds.sh", {});
    CHECK(sc.plan.moe_dispatcher == MoeDispatcher::kFlex);
    CHECK(sc.model.moe_router_num_groups == 8);
    CHECK(sc.model.moe_router_group_topk == 4);
    CHECK(sc.plan.expert_parallel == 64);
    // The router options are model settings (validated, changing no work) ...
    CHECK(sc.model.moe_router_score_function == "sigmoid");
    CHECK(sc.model.moe_router_enable_expert_bias);
    CHECK(sc.model.moe_router_topk_scaling_factor == 2.5);
    CHECK(sc.model.moe_router_pre_softmax);
    CHECK(sc.plan.moe_flex_backend == MoeFlexBackend::kDeepEp);
    // ... and the flags that change neither the traffic nor the memory are listed as ignored.
    for (const char* flag : {"--moe-router-dtype", "--moe-permute-fusion", "--moe-router-fusion",
                             "--moe-deepep-num-sms", "--moe-token-drop-policy",
                             "--moe-z-loss-coeff", "--moe-router-bias-update-rate"}) {
      bool found = false;
      for (const std::string& i : t.ignored) found = found || i.rfind(flag, 0) == 0;
      CHECK(found);
    }
  }
}

TEST_CASE("flex backends other than DeepEP and HybridEP, and DeepEP without flex, are refused",
          "[megatron][flex]") {
  const std::string base = kDeepSeek;
  const std::string hybrid =
      base + " --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep";
  CHECK(load_scenario_text(translate_megatron_args(hybrid, "h.sh", "dgx-h100").yaml, "h.sh", {})
            .plan.moe_flex_backend == MoeFlexBackend::kHybridEp);
  CHECK_THAT(translate_error(base + " --moe-token-dispatcher-type flex "
                                    "--moe-flex-dispatcher-backend ncclep"),
             Catch::Contains("expected one of them"));
  CHECK_THAT(translate_error(base + " --moe-token-dispatcher-type alltoall --moe-enable-deepep"),
             Catch::Contains("only with --moe-token-dispatcher-type flex"));
}
