// Megatron-LM launch scripts loaded as scenarios (config/megatron_load.h with
// config/megatron_args.h): variables expanded from the script and the environment, arguments
// never lost silently, and problems located at the launch file's argument.
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "config/megatron_args.h"
#include "config/megatron_load.h"
#include "config_support.h"
#include "core/errors.h"

using namespace trident;
using namespace trident::testing;

namespace {

Scenario load(const std::string& text, std::map<std::string, std::string> env = {}) {
  const MegatronScenario t = translate_megatron_args(text, "run.sh", "dgx-h100", environment(env));
  return load_megatron_scenario(t, "run.sh", {});
}

std::string error(const std::string& text, std::map<std::string, std::string> env = {}) {
  try {
    load(text, env);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// A launch script in the style of Megatron-LM's examples/: variables, arrays, a launcher
// whose arguments sit in a variable.
const char* const kScript =
    "#!/bin/bash\n"
    "GPUS_PER_NODE=8\n"
    "NNODES=${NNODES:-2}\n"
    "DISTRIBUTED_ARGS=\"--nproc_per_node $GPUS_PER_NODE --nnodes $NNODES "
    "--node_rank $NODE_RANK\"\n"
    "MODEL_ARGS=(\n"
    "    --num-layers 32\n"
    "    --hidden-size 4096 --num-attention-heads 32\n"
    "    --seq-length 4096 --vocab-size 32000\n"
    ")\n"
    "TRAIN_ARGS=\"--micro-batch-size 1 --global-batch-size 64 --bf16 --tensor-model-parallel-size "
    "$TP\"\n"
    "torchrun $DISTRIBUTED_ARGS pretrain_gpt.py \\\n"
    "    ${MODEL_ARGS[@]} \\\n"
    "    $TRAIN_ARGS \\\n"
    "    --save $CHECKPOINT_PATH 2>&1 | tee log.txt\n";

}  // namespace

TEST_CASE("launch scripts: variables from the script and the environment", "[megatron]") {
  Scenario s = load(kScript, {{"TP", "4"}});
  CHECK(s.cluster.total_gpus() == 16);  // --nnodes 2 inside $DISTRIBUTED_ARGS
  CHECK(s.model.num_layers == 32);
  CHECK(s.plan.tensor == 4);
  CHECK(s.plan.data == 4);
  s = load(kScript, {{"TP", "8"}, {"NNODES", "4"}});
  CHECK(s.cluster.total_gpus() == 32);
  CHECK(s.plan.data == 4);
}

TEST_CASE("launch scripts: a variable without a value is refused where it matters", "[megatron]") {
  // $TP gives a modelled argument.
  const std::string tp = error(kScript);
  CHECK_THAT(tp, Catch::StartsWith(
                     "run.sh:10:93: --tensor-model-parallel-size: no value (set neither in the "
                     "launch file before its use nor in the environment) for `$TP` (line 10, "
                     "column 93), the value of --tensor-model-parallel-size"));
  // $NODE_RANK (a launcher value) and $CHECKPOINT_PATH (an ignored argument's) do not matter.
  CHECK_THAT(tp, !Catch::Contains("NODE_RANK"));
  CHECK_THAT(tp, !Catch::Contains("CHECKPOINT_PATH"));
  // A variable that may hold the launcher's arguments, or Megatron's, is refused by name.
  const std::string args =
      "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
      "--vocab-size 32000 --micro-batch-size 1 --global-batch-size 8 --bf16";
  CHECK_THAT(error("torchrun $DISTRIBUTED_ARGS pretrain_gpt.py " + args),
             Catch::StartsWith("run.sh:1:10: $DISTRIBUTED_ARGS: no value"));
  CHECK_THAT(error("torchrun $DISTRIBUTED_ARGS pretrain_gpt.py " + args),
             Catch::Contains("`$DISTRIBUTED_ARGS` (line 1, column 10), which may hold "
                             "torchrun's --nnodes"));
  CHECK_THAT(error("torchrun --nnodes $N pretrain_gpt.py " + args),
             Catch::Contains("`$N` (line 1, column 19), the value of torchrun --nnodes"));
  CHECK_THAT(error("torchrun pretrain_gpt.py " + args + " $EXTRA_ARGS"),
             Catch::Contains("`$EXTRA_ARGS` (line 1, column 173), which may hold arguments"));
  CHECK(error("torchrun --nnodes 1 pretrain_gpt.py " + args + " $EXTRA_ARGS", {{"EXTRA_ARGS", ""}})
            .empty());
  CHECK(error("torchrun --nnodes 1 --node_rank $NODE_RANK pretrain_gpt.py " + args).empty());
}

TEST_CASE("problems in translated settings are located at the launch file's argument",
          "[megatron]") {
  const std::string script =
      "torchrun --nnodes 2 pretrain_gpt.py \\\n"
      "    --num-layers 32 --hidden-size 4096 --num-attention-heads 32 \\\n"
      "    --seq-length 4096 --vocab-size 32000 --micro-batch-size 1 \\\n"
      "    --global-batch-size 64 --bf16 \\\n"
      "    --tensor-model-parallel-size 3\n";
  CHECK_THAT(error(script), Catch::StartsWith("run.sh:5:5: --tensor-model-parallel-size "
                                              "(plan.tensor_parallel): "));
  std::string bad = script;
  bad.replace(bad.find("--num-layers 32"), 15, "--num-layers 3x");
  CHECK_THAT(error(bad), Catch::StartsWith("run.sh:2:5: --num-layers (model.num_layers): "));
  bad = script;
  bad.replace(bad.find("--nnodes 2"), 10, "--nnodes 2:4");
  CHECK_THAT(error(bad), Catch::StartsWith("run.sh:1:19: torchrun --nnodes (cluster.nodes): "));
  // A problem in an argument held by a variable is located in its assignment.
  CHECK_THAT(error("A=\"--hidden-size 40x0\"\ntorchrun pretrain_gpt.py --num-layers 2 $A "
                   "--num-attention-heads 32 --seq-length 64 --vocab-size 100 "
                   "--micro-batch-size 1 --global-batch-size 8\n"),
             Catch::StartsWith("run.sh:1:4: --hidden-size"));
}
