// Megatron-LM launch lines with experts and multi-latent attention (config/megatron_args):
// Megatron-Core's MoE and MLA arguments become model and plan settings.
#include <catch2/catch.hpp>
#include <string>

#include "config/megatron_args.h"
#include "config/scenario.h"
#include "core/errors.h"

using namespace trident;

namespace {

// Megatron-Core's Mixtral 8x7B recipe (TP1 PP4 EP8 on 64 GPUs), as its launch line writes it.
const char* const kMixtral =
    "torchrun --nnodes 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
    "--num-attention-heads 32 --group-query-attention --num-query-groups 8 "
    "--ffn-hidden-size 14336 --seq-length 4096 --vocab-size 32000 --swiglu "
    "--position-embedding-type rope --untie-embeddings-and-output-weights "
    "--normalization RMSNorm --attention-dropout 0 --hidden-dropout 0 --disable-bias-linear "
    "--num-experts 8 --moe-router-topk 2 --moe-grouped-gemm --moe-token-dispatcher-type alltoall "
    "--moe-router-load-balancing-type aux_loss --moe-aux-loss-coeff 1e-2 "
    "--expert-model-parallel-size 8 --pipeline-model-parallel-size 4 "
    "--micro-batch-size 1 --global-batch-size 256 --bf16 --use-distributed-optimizer";

std::string translate_error(const std::string& text) {
  try {
    translate_megatron_args(text, "line.sh", "dgx-h100");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a Megatron-Core MoE launch line becomes an expert-parallel scenario", "[megatron]") {
  const MegatronScenario t = translate_megatron_args(kMixtral, "mixtral.sh", "dgx-h100");
  const Scenario sc = load_scenario_text(t.yaml, "mixtral.sh", {});
  CHECK(sc.model.num_experts == 8);
  CHECK(sc.model.moe_router_topk == 2);
  CHECK(sc.model.moe_ffn_hidden_size == 14336);  // = ffn_hidden_size
  CHECK(sc.plan.expert_parallel == 8);
  CHECK(sc.plan.moe_dispatcher == MoeDispatcher::kAllToAll);
  CHECK(sc.plan.data == 16);
  CHECK(sc.plan.expert_data_parallel() == 2);
  bool listed = false;
  for (const std::string& i : t.ignored) listed = listed || i.find("--moe-aux-loss-coeff") == 0;
  CHECK(listed);
  // --moe-grouped-gemm and --disable-bias-linear are settings; Megatron's defaults (no grouped
  // GEMM, biases) when they are left out.
  CHECK(sc.plan.moe_grouped_gemm);
  CHECK_FALSE(sc.model.linear_biases());
  std::string plain = kMixtral;
  for (const std::string flag : {" --moe-grouped-gemm", " --disable-bias-linear"}) {
    plain.erase(plain.find(flag), flag.size());
  }
  const Scenario defaults =
      load_scenario_text(translate_megatron_args(plain, "m.sh", "dgx-h100").yaml, "m.sh", {});
  CHECK_FALSE(defaults.plan.moe_grouped_gemm);
  CHECK(defaults.model.expert_biases());
}

TEST_CASE("MLA, shared experts and a layer pattern from a DeepSeek-style line", "[megatron]") {
  const std::string line =
      "--num-layers 61 --hidden-size 7168 --num-attention-heads 128 --ffn-hidden-size 18432 "
      "--seq-length 4096 --vocab-size 129280 --swiglu --multi-latent-attention "
      "--q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128 --qk-pos-emb-head-dim 64 "
      "--v-head-dim 128 --num-experts 256 --moe-router-topk 8 --moe-ffn-hidden-size 2048 "
      "--moe-shared-expert-intermediate-size 2048 --moe-layer-freq ([0]*3+[1]*58) "
      "--expert-model-parallel-size 64 --pipeline-model-parallel-size 16 "
      "--decoder-last-pipeline-num-layers 1 --mtp-num-layers 1 --mtp-loss-scaling-factor 0.1 "
      "--micro-batch-size 1 --global-batch-size 1024 --bf16";
  const MegatronScenario t =
      translate_megatron_args("torchrun --nnodes 128 x.py " + line, "ds.sh", "dgx-h100");
  const Scenario sc = load_scenario_text(t.yaml, "ds.sh", {});
  CHECK(sc.model.multi_latent_attention);
  CHECK(sc.model.q_lora_rank == 1536);
  CHECK(sc.model.kv_lora_rank == 512);
  CHECK(sc.model.moe_shared_expert_intermediate_size == 2048);
  CHECK_FALSE(sc.model.is_moe_layer(2));
  CHECK(sc.model.is_moe_layer(3));
  CHECK(sc.model.is_moe_layer(60));
  CHECK(sc.model.mtp_num_layers == 1);
  CHECK(sc.model.mtp_loss_scaling_factor == 0.1);
  CHECK(sc.plan.expert_parallel == 64);
  // A layer pattern it cannot read, and a flex backend other than DeepEP and HybridEP, are
  // refused by name.
  const std::string bad = translate_error(std::string(kMixtral) + " --moe-layer-freq [2]*32");
  CHECK_THAT(bad, Catch::Contains("--moe-layer-freq [2]*32"));
  CHECK_THAT(translate_error(std::string(kMixtral) +
                             " --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend "
                             "ncclep"),
             Catch::Contains("--moe-flex-dispatcher-backend ncclep"));
}

TEST_CASE("the combined 1F1B's arguments: the overlap a setting, the wgrad delay listed",
          "[megatron]") {
  // --overlap-moe-expert-parallel-comm with the interleaved schedule Megatron-Core requires at
  // PP > 1; --delay-wgrad-compute is not modelled and is listed as ignored.
  const std::string line = std::string(kMixtral) +
                           " --overlap-moe-expert-parallel-comm --delay-wgrad-compute"
                           " --num-layers-per-virtual-pipeline-stage 4";
  const MegatronScenario t = translate_megatron_args(line, "mixtral.sh", "dgx-h100");
  const Scenario sc = load_scenario_text(t.yaml, "mixtral.sh", {});
  CHECK(sc.plan.overlap_moe_expert_parallel_comm);
  CHECK(sc.plan.virtual_stages == 2);
  bool listed = false;
  for (const std::string& i : t.ignored) listed = listed || i.find("--delay-wgrad-compute") == 0;
  CHECK(listed);
  // Without interleaving at PP 4 the scenario is refused, naming the requirement.
  const MegatronScenario plain = translate_megatron_args(
      std::string(kMixtral) + " --overlap-moe-expert-parallel-comm", "m.sh", "dgx-h100");
  std::string message;
  try {
    load_scenario_text(plain.yaml, "m.sh", {});
  } catch (const ConfigError& e) {
    message = e.what();
  }
  CHECK(message.find("needs the interleaved schedule") != std::string::npos);
}
