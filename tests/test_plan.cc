// Sharded data parallelism and the DP overlap settings (plan.data_parallel_sharding_strategy,
// distributed_optimizer as its alias, grad_reduce_in_bf16, overlap_param_gather,
// tp_comm_overlap): how they are read and refused, the Megatron flags, the step programs and
// memory per GPU by exact formula.
#include <algorithm>
#include <catch2/catch.hpp>

#include "config/megatron_args.h"
#include "config/scenario.h"
#include "core/errors.h"
#include "layout/program.h"
#include "workload/stage_work.h"

using namespace trident;

namespace {

std::string repo(const std::string& rel) { return std::string(TRIDENT_SOURCE_DIR) + "/" + rel; }
const std::string kLlama70b = "scenarios/llama3-70b-dgx-h100.yaml";

Scenario load(std::vector<std::string> sets) { return load_scenario(repo(kLlama70b), sets); }

std::string load_error(std::vector<std::string> sets) {
  try {
    load(std::move(sets));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("distributed_optimizer is the alias of sharding strategy optim", "[dp_sharding]") {
  // The shipped scenario says distributed_optimizer: true.
  CHECK(load({}).plan.dp_sharding == DpSharding::kOptim);
  const Scenario zero2 = load({"plan.data_parallel_sharding_strategy=optim_grads"});
  CHECK(zero2.plan.dp_sharding == DpSharding::kOptimGrads);
  CHECK(zero2.plan.distributed_optimizer);
  const Scenario none = load({"plan.distributed_optimizer=false"});
  CHECK(none.plan.dp_sharding == DpSharding::kNoShard);
  CHECK_THAT(load_error({"plan.data_parallel_sharding_strategy=no_shard"}),
             Catch::Contains("distributed_optimizer: true contradicts "
                             "data_parallel_sharding_strategy no_shard"));
}

TEST_CASE(
    "tp_comm_overlap needs sequence parallelism; overlap_param_gather the distributed "
    "optimizer",
    "[dp_sharding]") {
  CHECK(load({"plan.tp_comm_overlap=true"}).plan.tp_comm_overlap);
  CHECK_THAT(load_error({"plan.tp_comm_overlap=true", "plan.sequence_parallel=false"}),
             Catch::Contains("tp_comm_overlap needs sequence_parallel: true"));
  CHECK_THAT(load_error({"plan.overlap_param_gather=true", "plan.distributed_optimizer=false"}),
             Catch::Contains("overlap_param_gather needs the distributed optimizer"));
}

TEST_CASE("Megatron's overlap and sharding flags become plan settings", "[dp_sharding][megatron]") {
  const std::string line =
      "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
      "--vocab-size 32000 --micro-batch-size 1 --global-batch-size 1024 --bf16 "
      "--tensor-model-parallel-size 8 --sequence-parallel --tp-comm-overlap "
      "--use-distributed-optimizer --overlap-param-gather --grad-reduce-in-bf16 "
      "--use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params "
      "--ddp-average-in-collective";
  const MegatronScenario t = translate_megatron_args(line, "line.sh", "dgx-h100");
  const Scenario s = load_scenario_text(t.yaml, "line.sh", {});
  CHECK(s.plan.tp_comm_overlap);
  CHECK(s.plan.overlap_param_gather);
  CHECK(s.plan.grad_reduce_in_bf16);
  CHECK(s.plan.dp_sharding == DpSharding::kOptimGradsParams);
}

TEST_CASE("the step's parameter all-gather goes where the weights are gathered", "[dp_sharding]") {
  const auto gathers = [](const Scenario& s) {
    int n = 0;
    const std::vector<StageProgram> programs = build_programs(s.plan);
    for (const Instr& in : programs.front().instrs) {
      n += in.kind == InstrKind::kDpParamGather ? 1 : 0;
    }
    return n;
  };
  CHECK(gathers(load({})) == 1);
  CHECK(gathers(load({"plan.overlap_param_gather=true"})) == 0);
  CHECK(gathers(load({"plan.data_parallel_sharding_strategy=optim_grads"})) == 1);
  CHECK(gathers(load({"plan.data_parallel_sharding_strategy=optim_grads_params"})) == 0);
}

TEST_CASE("memory per GPU of each sharding strategy, by formula", "[dp_sharding][memory]") {
  // Llama 3 70B, t = 8, p = 4, d = 16: P parameters per GPU of stage 1 (20 layers), one
  // layer's L = P / 20; bf16 weights (2 B), fp32 gradients (4 B), Adam 12 B.
  const double d = 16;
  const Scenario base = load({"plan.distributed_optimizer=false"});
  const StageWork st0 = build_workload(base).stages[1];
  const double P = st0.params_per_gpu, L = layer_params(base.model) / 8;
  CHECK(P == Approx(20 * L));
  const double bucket = std::max(40e6, 1e6 * d);  // Megatron's default bucket
  struct Case {
    const char* strategy;
    double weights, gradients, optimizer;
  };
  const Case cases[] = {
      {"no_shard", 2 * P, 4 * P, 12 * P},
      {"optim", 2 * P, 4 * P, 12 * P / d},
      {"optim_grads", 2 * P, 4 * P / d + 4 * bucket, 12 * P / d},
      {"optim_grads_params", 2 * P / d + 2 * 2 * L, 4 * P / d + 4 * L, 12 * P / d},
  };
  for (const Case& c : cases) {
    const std::string strategy = c.strategy;
    const Scenario s = load(
        {"plan.distributed_optimizer=" + std::string(strategy == "no_shard" ? "false" : "true"),
         "plan.data_parallel_sharding_strategy=" + strategy});
    const StageMemory m = build_workload(s).stages[1].memory;
    INFO(c.strategy);
    CHECK(m.weights == Approx(c.weights));
    CHECK(m.gradients == Approx(c.gradients));
    CHECK(m.optimizer == Approx(c.optimizer));
  }
}

TEST_CASE("gradients reduced in bf16: half the bytes on the wire, fp32 main-gradient shards",
          "[dp_sharding][memory]") {
  const Scenario fp32 = load({});
  const Scenario bf16 = load({"plan.grad_reduce_in_bf16=true"});
  const StageWork a = build_workload(fp32).stages[1];
  const StageWork b = build_workload(bf16).stages[1];
  const double P = a.params_per_gpu;
  CHECK(b.grad_bytes == Approx(a.grad_bytes / 2));
  // Megatron's bf16 gradient buffer; the fp32 gradient of the optimizer's 1/d shard is held
  // during the step only, when the activations (larger here) are gone.
  CHECK(b.memory.step_main_grads == Approx(4 * P / 16));
  REQUIRE(b.memory.activations > b.memory.step_main_grads);
  CHECK(b.memory.gradients == Approx(2 * P));
  // With full recomputation and one micro-batch in flight the step's copy can exceed what the
  // backward held: then the excess is the peak's.
  const Scenario lean = load({"plan.grad_reduce_in_bf16=true", "plan.recompute=full"});
  const StageMemory m = build_workload(lean).stages[1].memory;
  CHECK(m.gradients == Approx(2 * P + std::max(0.0, m.step_main_grads - m.activations -
                                                        m.cp_buffers - m.dispatch_buffers)));
}
