// Scenario loading (config/scenario): shipped files, defaults, inline and referenced sections,
// the fields each section reads, and errors that carry file, line, column and key path.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "config_support.h"

using namespace trident;
using namespace trident::testing;

TEST_CASE("the shipped GPT-3 scenario resolves to the paper's plan", "[config]") {
  const Scenario s = load_scenario(kGpt3, {});
  CHECK(s.path == kGpt3);
  CHECK(s.name == "gpt3-175b-3d");

  const ClusterSpec& c = s.cluster;
  CHECK(c.name == "dgx-a100-superpod");
  CHECK(c.total_gpus() == 1024);
  CHECK(c.gpus_per_node == 8);
  CHECK(c.gpu.peak_flops.size() == 4);
  CHECK(c.peak(Precision::kBf16) == 312e12);
  CHECK(c.peak(Precision::kFp32) == Approx(19.5e12));
  CHECK(c.gpu.memory_bytes == 80.0 * (1ull << 30));
  CHECK(c.gpu.memory_bandwidth == 2039e9);
  // Calibrated compute-model values: only their ranges are the loader's business.
  CHECK(c.gpu.efficiency.gemm > 0);
  CHECK(c.gpu.efficiency.gemm <= 1);
  CHECK(c.gpu.efficiency.gemm_half_flops > 0);
  CHECK(c.gpu.efficiency.kernel_overhead_s >= 0);
  CHECK(c.nvlink.island_size == 8);
  CHECK(c.nvlink.bandwidth == 300e9);
  CHECK(c.nvlink.latency == Approx(2e-6));
  CHECK(c.nvlink.protocol_efficiency > 0);
  CHECK(c.nvlink.protocol_efficiency <= 1);
  CHECK(c.network.topology == Topology::kFatTree);
  CHECK(c.network.nics_per_node == 8);
  CHECK(c.network.nic_bandwidth == 25e9);  // 200 Gbps
  CHECK(c.network.oversubscription == 1);
  CHECK(c.network.nodes_per_leaf == 20);

  const ModelSpec& m = s.model;
  CHECK(m.num_layers == 96);
  CHECK(m.hidden_size == 12288);
  CHECK(m.num_attention_heads == 96);
  CHECK(m.num_query_groups == 96);
  CHECK(m.ffn_hidden_size == 4 * 12288);
  CHECK(m.seq_length == 2048);
  CHECK(m.vocab_size == 51200);
  CHECK(m.learned_position_embeddings);
  CHECK_FALSE(m.swiglu);

  const PlanSpec& p = s.plan;
  CHECK(p.tensor == 8);
  CHECK(p.pipeline == 8);
  CHECK(p.data == 16);
  CHECK(p.micro_batch_size == 1);
  CHECK(p.global_batch_size == 1536);
  CHECK(p.num_microbatches == 96);
  CHECK(p.schedule == ScheduleKind::k1F1B);
  CHECK(p.virtual_stages == 1);
  // [tensor, data, pipeline] in the file: context (size 1) goes right after tensor.
  CHECK(p.placement == std::vector<ParallelDim>{ParallelDim::kTensor, ParallelDim::kContext,
                                                ParallelDim::kData, ParallelDim::kPipeline});
  CHECK(p.context == 1);
  CHECK(p.precision == Precision::kBf16);
  CHECK(p.gpus() == 1024);
  CHECK(s.sweep.empty());
}

TEST_CASE("the tiny scenario: inline model, defaults and sweep", "[config]") {
  const Scenario s = load_scenario(kTiny, {});
  CHECK(s.cluster.total_gpus() == 8);
  CHECK(s.cluster.nvlink.island_size == 4);  // default gpus_per_node
  CHECK(s.cluster.network.topology == Topology::kSingleSwitch);
  CHECK(s.model.ffn_hidden_size == 4096);  // default 4 * hidden
  CHECK(s.model.num_query_groups == 16);   // default heads
  CHECK(s.plan.data == 2);
  CHECK(s.plan.num_microbatches == 8);
  CHECK(s.plan.global_batch_size == 16);  // 8 * 1 * 2
  REQUIRE(s.sweep.size() == 1);
  CHECK(s.sweep[0].key == "plan.num_microbatches");
  CHECK(s.sweep[0].values == std::vector<std::string>{"2", "4", "8", "16"});
}

TEST_CASE("shipped cluster and model files load on their own", "[config]") {
  const ModelSpec m = load_model_file(repo("configs/models/megatron-22b.yaml"));
  CHECK(m.hidden_size == 6144);
  CHECK(m.num_attention_heads == 64);
  CHECK(m.num_layers == 48);
  CHECK(m.seq_length == 2048);
  CHECK(m.vocab_size == 51200);
  CHECK(load_cluster_file(repo("configs/clusters/tiny-2node.yaml")).total_gpus() == 8);
  CHECK(validate_config_file(repo("configs/clusters/dgx-a100-superpod.yaml")) ==
        ConfigFileKind::kCluster);
  CHECK(validate_config_file(repo("configs/models/gpt3-175b.yaml")) == ConfigFileKind::kModel);
  CHECK(validate_config_file(kGpt3) == ConfigFileKind::kScenario);
  CHECK(validate_config_file(kTiny) == ConfigFileKind::kScenario);
}

TEST_CASE("validate_config_file tells plan files and unknown files apart", "[config]") {
  CHECK(validate_config_file(write_temp("p.yaml",
                                        "tensor_parallel: 8\nmicro_batch_size: 1\n"
                                        "num_microbatches: 4\n")) == ConfigFileKind::kPlan);
  CHECK_THROWS_WITH(validate_config_file(write_temp("p.yaml", "tensor_parallel: 8\n")),
                    Catch::Contains("plan.micro_batch_size: missing required key"));
  CHECK_THROWS_WITH(validate_config_file(write_temp("x.yaml", "colour: blue\n")),
                    Catch::Contains("x.yaml:1:1: cannot tell what this file describes"));
  CHECK_THROWS_WITH(validate_config_file(write_temp("m.yaml", "num_layers: 2\n")),
                    Catch::Contains("m.yaml:1:1: model.name: missing required key"));
}

TEST_CASE("data_parallel defaults to the GPUs left over", "[config]") {
  const Scenario s = load_scenario(kGpt3, {"plan.data_parallel=", "plan.tensor_parallel=4"});
  CHECK(s.plan.data == 32);  // 1024 / (4 * 8)
  CHECK(s.plan.num_microbatches == 48);
}

TEST_CASE("errors carry file, line, column and key path", "[config]") {
  const std::string path =
      write_temp("pos.yaml", std::string("cluster:") + kInlineCluster +
                                 "model: " + repo("configs/models/gpt3-175b.yaml") +
                                 "\nplan:\n  micro_batch_size: 1\n"
                                 "  global_batch_size: x\n");
  CHECK(load_error(path) == path +
                                ":15:22: plan.global_batch_size: `x` is not an integer "
                                "(expected an integer from 1 to 1000000000)");
}

TEST_CASE("inline and referenced sections give the same scenario", "[config]") {
  const std::string cluster = write_temp("c.yaml", kInlineCluster);
  const std::string dir = std::filesystem::path(cluster).parent_path().string();
  std::ofstream(dir + "/s.yaml") << "cluster: c.yaml\nmodel: "
                                 << repo("configs/models/gpt3-175b.yaml")
                                 << "\nplan: {tensor_parallel: 8, micro_batch_size: 2, "
                                    "num_microbatches: 4}\n";
  const Scenario s = load_scenario(dir + "/s.yaml", {});
  CHECK(s.cluster.total_gpus() == 8);
  CHECK(s.cluster.network.nics_per_node == 4);
  CHECK(s.plan.pipeline == 1);
  CHECK(s.plan.data == 1);
  CHECK(s.plan.global_batch_size == 8);
}

TEST_CASE("a missing scenario file is named as given", "[config]") {
  CHECK_THAT(load_error("no/such/scenario.yaml"),
             Catch::StartsWith("no/such/scenario.yaml: cannot open file"));
}

TEST_CASE("grad_bucket_size and untied embeddings are read", "[validate]") {
  const Scenario s = load_scenario(
      repo("scenarios/gpt3-175b-3d.yaml"),
      {"plan.grad_bucket_size=25000000", "model.untie_embeddings_and_output_weights=true"});
  CHECK(s.plan.grad_bucket_size == 25000000);
  CHECK(s.model.untie_embeddings_and_output_weights);
  const Scenario d = load_scenario(repo("scenarios/gpt3-175b-3d.yaml"), {});
  CHECK(d.plan.grad_bucket_size == 0);
  CHECK_FALSE(d.model.untie_embeddings_and_output_weights);
}
