// Scenario loading: shipped files, defaults, overrides, error positions (config/).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "config/checks.h"
#include "config/did_you_mean.h"
#include "config/scenario.h"
#include "config/yaml_tree.h"
#include "core/errors.h"

using namespace trident;

namespace {

std::string repo(const std::string& rel) { return std::string(TRIDENT_SOURCE_DIR) + "/" + rel; }

const std::string kGpt3 = repo("scenarios/gpt3-175b-3d.yaml");
const std::string kTiny = repo("scenarios/tiny.yaml");

// Writes `text` to a fresh file `name` in a per-test temporary directory; returns its path.
std::string write_temp(const std::string& name, const std::string& text) {
  namespace fs = std::filesystem;
  static int counter = 0;
  fs::path dir = fs::temp_directory_path() / ("trident_test_config_" + std::to_string(::getpid()) +
                                              "_" + std::to_string(counter++));
  fs::create_directories(dir);
  fs::path file = dir / name;
  std::ofstream(file) << text;
  return file.string();
}

// The message of the ConfigError that loading `path` with `overrides` throws.
std::string load_error(const std::string& path, const std::vector<std::string>& overrides = {}) {
  try {
    load_scenario(path, overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  FAIL("no ConfigError for " << path);
  return "";
}

const char* kInlineCluster = R"(
  name: c
  gpu:
    name: g
    peak_flops: {bf16: 100 TFLOPS}
    memory: 40 GiB
    memory_bandwidth: 1 TB/s
  nodes: 2
  gpus_per_node: 4
  nvlink: {bandwidth: 100 GB/s, latency: 1 us}
  network: {nic_bandwidth: 100 Gbps, latency: 3 us}
)";

}  // namespace

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
  CHECK(p.placement[0] == ParallelDim::kTensor);
  CHECK(p.placement[1] == ParallelDim::kData);
  CHECK(p.placement[2] == ParallelDim::kPipeline);
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

TEST_CASE("duplicate keys are refused with both lines", "[config][yaml]") {
  try {
    parse_yaml("a: 1\nb: 2\na: 3\n", "d.yaml");
    FAIL("duplicate accepted");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) ==
          "d.yaml:3:1: a: duplicate key (first given at line 1; remove one)");
  }
}

TEST_CASE("YAML trees keep positions, quoting and aliases", "[config][yaml]") {
  YamlNodePtr root = parse_yaml("x: &a {k: \"8\"}\ny: *a\nz:\n  - 1\n", "t.yaml");
  REQUIRE(root->is_map());
  const YamlNode* k = find_path(*root, "y.k");
  REQUIRE(k != nullptr);
  CHECK(k->quoted);
  CHECK(k->scalar == "8");
  const YamlNode* z = find_path(*root, "z");
  REQUIRE(z->is_sequence());
  CHECK(z->items[0]->mark.line == 4);
  CHECK(z->items[0]->mark.column == 5);
  CHECK(parse_yaml("", "e.yaml")->is_null());
  CHECK_THROWS_AS(parse_yaml("a: [1, 2\n", "s.yaml"), ConfigError);
  CHECK_THROWS_AS(parse_yaml("a: 1\n---\nb: 2\n", "m.yaml"), ConfigError);
}

TEST_CASE("did-you-mean suggestions", "[config]") {
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
  const std::vector<std::string> keys = {"nodes", "gpus_per_node", "nvlink", "network"};
  CHECK(closest_match("nodez", keys) == "nodes");
  CHECK(closest_match("gpus_per_nodes", keys) == "gpus_per_node");
  CHECK(closest_match("Network", keys) == "network");
  CHECK(closest_match("banana", keys).empty());
  CHECK_THAT(suggestion("banana", keys), Catch::StartsWith("expected one of: nodes,"));
}

TEST_CASE("validate_scenario checks specs built in code", "[config]") {
  Scenario s = load_scenario(kGpt3, {});
  CHECK_NOTHROW(validate_scenario(s));
  s.plan.tensor = 7;
  CHECK_THROWS_AS(validate_scenario(s), PlanError);
  s = load_scenario(kGpt3, {});
  s.plan.num_microbatches = 10;  // global batch no longer m * b * d
  CHECK_THROWS_WITH(validate_scenario(s), Catch::Contains("plan.global_batch_size"));
  s = load_scenario(kGpt3, {});
  s.cluster.nvlink.island_size = 3;
  CHECK_THROWS_WITH(validate_scenario(s), Catch::Contains("cluster.nvlink.island_size"));
}

TEST_CASE("products are checked in 64 bits", "[config]") {
  CHECK(checked_mul(1 << 30, 1 << 30) == (std::int64_t{1} << 60));
  CHECK(checked_mul(std::int64_t{1} << 40, std::int64_t{1} << 40) == -1);
}
