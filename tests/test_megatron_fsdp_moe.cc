// A Megatron-FSDP mixture-of-experts launch line (config/megatron_args, checks): experts with
// --data-parallel-sharding-strategy optim_grads / optim_grads_params are taken, and the
// experts' weights, gradients and optimizer state shard over the expert-data-parallel group.
#include <catch2/catch.hpp>
#include <string>

#include "config/megatron_args.h"
#include "config/scenario.h"
#include "workload/stage_work.h"

using namespace trident;

namespace {

// Megatron-Core's Mixtral 8x7B recipe (TP1 PP4 EP8 on 64 GPUs) under Megatron-FSDP.
std::string mixtral_fsdp(const std::string& strategy) {
  return "torchrun --nnodes 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 "
         "--num-attention-heads 32 --group-query-attention --num-query-groups 8 "
         "--ffn-hidden-size 14336 --seq-length 4096 --vocab-size 32000 --swiglu "
         "--position-embedding-type rope --untie-embeddings-and-output-weights "
         "--normalization RMSNorm --attention-dropout 0 --hidden-dropout 0 --disable-bias-linear "
         "--num-experts 8 --moe-router-topk 2 --moe-grouped-gemm --moe-token-dispatcher-type "
         "alltoall "
         "--expert-model-parallel-size 8 --pipeline-model-parallel-size 4 "
         "--micro-batch-size 1 --global-batch-size 256 --bf16 --use-distributed-optimizer "
         "--overlap-grad-reduce --overlap-param-gather --use-megatron-fsdp "
         "--data-parallel-sharding-strategy " +
         strategy;
}

}  // namespace

TEST_CASE("a Megatron-FSDP MoE launch line shards the experts over their data-parallel group",
          "[megatron][moe]") {
  double previous_weights = 0;
  for (const char* strategy : {"optim", "optim_grads", "optim_grads_params"}) {
    CAPTURE(strategy);
    const MegatronScenario t =
        translate_megatron_args(mixtral_fsdp(strategy), "fsdp.sh", "dgx-h100");
    const Scenario sc = load_scenario_text(t.yaml, "fsdp.sh", {});  // validated: not refused
    CHECK(sc.plan.expert_parallel == 8);
    CHECK(sc.plan.expert_data_parallel() == 2);
    const StageWork& st = build_workload(sc).stages[1];
    // Stage 1 holds 8 MoE layers, one expert of 3 x 4096 x 14336 each per GPU.
    const double X = 8 * 3.0 * 4096 * 14336, layer = X / 8;
    REQUIRE(st.expert_params_per_gpu == X);
    const double dense = st.params_per_gpu - X;
    if (sc.plan.shards_params()) {
      // bf16 shards over d = 16 and EDP = 2, and two gathered layers (dense unit and expert).
      const double unit = st.grad_bucket_params;
      CHECK(st.memory.weights == Approx(2 * dense / 16 + 4 * unit + 2 * X / 2 + 4 * layer));
      CHECK(st.memory.weights < previous_weights);
    } else {
      CHECK(st.memory.weights == Approx(2 * (dense + X)));
    }
    CHECK(st.memory.optimizer == Approx(12 * dense / 16 + 12 * X / 2));
    previous_weights = st.memory.weights;
  }
}
