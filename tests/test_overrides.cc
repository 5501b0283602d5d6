// Overrides (config/overrides): --set and a scenario's overrides change any field after files are
// read, and their errors name the argument and its position.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config/overrides.h"
#include "config_support.h"

using namespace trident;
using namespace trident::testing;

TEST_CASE("overrides change any field after files are read", "[config][overrides]") {
  const Scenario s = load_scenario(
      kGpt3, {"cluster.nvlink.bandwidth=900 GB/s", "cluster.nodes=64", "model.seq_length=4096",
              "plan.tensor_parallel=4", "plan.data_parallel=8", "plan.sequence_parallel=true",
              "plan.recompute=selective", "plan.placement=[pipeline, data, tensor]",
              "cluster.gpu.efficiency.gemm=0.5", "cluster.gpu.peak_flops.fp8=624 TFLOPS",
              "plan.precision=fp8"});
  CHECK(s.cluster.nvlink.bandwidth == 900e9);
  CHECK(s.cluster.total_gpus() == 512);
  CHECK(s.model.seq_length == 4096);
  CHECK(s.plan.tensor == 4);
  CHECK(s.plan.data == 8);
  CHECK(s.plan.num_microbatches == 192);  // 1536 / 8
  CHECK(s.plan.sequence_parallel);
  CHECK(s.plan.recompute == Recompute::kSelective);
  CHECK(s.plan.placement[0] == ParallelDim::kPipeline);
  CHECK(s.cluster.gpu.efficiency.gemm == 0.5);
  CHECK(s.plan.precision == Precision::kFp8);
  CHECK(s.cluster.peak(Precision::kFp8) == 624e12);
}

TEST_CASE("overriding one batch field replaces the other", "[config][overrides]") {
  const Scenario a = load_scenario(kGpt3, {"plan.num_microbatches=32"});
  CHECK(a.plan.num_microbatches == 32);
  CHECK(a.plan.global_batch_size == 512);  // 32 * 1 * 16
  const Scenario b = load_scenario(kTiny, {"plan.global_batch_size=64"});
  CHECK(b.plan.num_microbatches == 32);  // 64 / (1 * 2)
  // Later overrides win.
  CHECK(load_scenario(kTiny, {"plan.num_microbatches=4", "plan.num_microbatches=6"})
            .plan.num_microbatches == 6);
}

TEST_CASE("override errors name the --set argument", "[config][overrides]") {
  std::string e = load_error(kGpt3, {"plan.tensor_paralel=4"});
  CHECK_THAT(e, Catch::StartsWith("--set plan.tensor_paralel=4: plan.tensor_paralel: "));
  CHECK_THAT(e, Catch::Contains("did you mean `tensor_parallel`?"));
  e = load_error(kGpt3, {"plan.tensor_parallel=abc"});
  CHECK(e ==
        "--set plan.tensor_parallel=abc: plan.tensor_parallel: `abc` is not an integer "
        "(expected an integer from 1 to 1000000)");
  e = load_error(kGpt3, {"cluster.nvlink.bandwidth=900"});
  CHECK_THAT(e, Catch::Contains("--set cluster.nvlink.bandwidth=900: "));
  CHECK_THAT(e, Catch::Contains("has no unit"));
  CHECK_THAT(load_error(kGpt3, {"plan.tensor_parallel"}), Catch::Contains("expected key=value"));
  CHECK_THAT(load_error(kGpt3, {"plans.tensor_parallel=2"}),
             Catch::Contains("did you mean `plan`?"));
  CHECK_THAT(load_error(kGpt3, {"cluster.name.x=2"}), Catch::Contains("has no sub-keys"));
}

TEST_CASE("an override through a non-map value points at that value", "[config][overrides]") {
  std::string cluster = kInlineCluster;
  cluster.replace(cluster.find("nvlink: {"),
                  std::string("nvlink: {bandwidth: 100 GB/s, latency: 1 us}").size(), "nvlink: 5");
  const std::string path = write_temp(
      "leaf.yaml", "cluster:" + cluster + "model: " + repo("configs/models/gpt3-175b.yaml") +
                       "\nplan: {num_microbatches: 1}\n");
  CHECK_THAT(load_error(path, {"cluster.nvlink.bandwidth=1 GB/s"}),
             Catch::Contains("leaf.yaml:10:11: cluster.nvlink: cannot apply --set "
                             "cluster.nvlink.bandwidth=1 GB/s: expected a map of settings here, "
                             "got the value `5`"));
}

TEST_CASE("a scenario's overrides: apply before --set, with their own positions",
          "[validate][overrides]") {
  const std::string path =
      write_temp("o.yaml", kScenarioHead +
                               "plan: {tensor_parallel: 8, pipeline_parallel: 8, "
                               "micro_batch_size: 1, num_microbatches: 8}\n"
                               "overrides:\n  cluster.nodes: 16\n  model.seq_length: 4096\n");
  const Scenario s = load_scenario(path, {});
  CHECK(s.cluster.total_gpus() == 128);
  CHECK(s.plan.data == 2);
  CHECK(s.model.seq_length == 4096);
  CHECK(load_scenario(path, {"model.seq_length=1024"}).model.seq_length == 1024);
  const std::string bad = write_temp("ob.yaml", kScenarioHead +
                                                    "plan: {micro_batch_size: 1, "
                                                    "num_microbatches: 8}\n"
                                                    "overrides:\n  cluster.nodes: 0\n");
  CHECK_THAT(load_error(bad), Catch::Contains("ob.yaml:5:18: cluster.nodes: 0 is too small"));
}
