// The settings table (config/settings.h) and its documents (config/settings_doc.h).
#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "config/map_reader.h"
#include "config/scenario.h"
#include "config/section_readers.h"
#include "config/settings.h"
#include "config/settings_doc.h"
#include "core/errors.h"

using namespace trident;

namespace {

std::string repo(const std::string& rel) { return std::string(TRIDENT_SOURCE_DIR) + "/" + rel; }

// Loads the tiny scenario with `sets`; returns the error message, or "" when it loads.
std::string load_error(const std::vector<std::string>& sets) {
  try {
    load_scenario(repo("scenarios/tiny.yaml"), sets);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("every setting is declared once, with a doc, and maps lead to their sections",
          "[settings]") {
  std::set<std::string> paths;
  for (const SettingSection& section : settings_sections()) {
    INFO("section " << section.path);
    CHECK(paths.insert(section.path).second);
    CHECK_FALSE(section.doc.empty());
    std::set<std::string> keys;
    for (const Setting& s : section.settings) {
      INFO("key " << s.key);
      CHECK(keys.insert(s.key).second);
      CHECK_FALSE(s.doc.empty());
      CHECK_FALSE(s.default_text().empty());
      // A required setting has no default, and a default is never also "derived".
      CHECK_FALSE((s.required && !s.default_value.empty()));
      CHECK_FALSE((!s.derived.empty() && !s.default_value.empty()));
      if (s.kind == SettingKind::kInteger || s.kind == SettingKind::kNumber ||
          s.kind == SettingKind::kQuantity) {
        CHECK(s.min <= s.max);
        CHECK_FALSE(s.range_text().empty());
      }
    }
  }
  // Sub-sections named in the table exist as sections.
  for (const char* path :
       {"cluster", "cluster.gpu", "cluster.gpu.peak_flops", "cluster.gpu.efficiency",
        "cluster.nvlink", "cluster.network", "model", "plan"}) {
    INFO(path);
    CHECK(find_section(path) != nullptr);
  }
  CHECK(find_setting("plan", "tensor_parallel") != nullptr);
  CHECK(find_setting("plan", "tensor_parallelism") == nullptr);
  CHECK_THROWS_AS(setting("plan", "no_such_key"), std::logic_error);
}

TEST_CASE("every default is a value its own setting accepts", "[settings]") {
  // Each default, written into a one-key map, must pass the same reader a user's value passes.
  for (const SettingSection& section : settings_sections()) {
    for (const Setting& s : section.settings) {
      if (s.default_value.empty() || s.kind == SettingKind::kList) continue;
      INFO(section.path << "." << s.key << " = " << s.default_value);
      const YamlNodePtr doc = parse_yaml(s.key + ": " + s.default_value + "\n", "default");
      const MapReader map(*doc, section.path, YamlMark{});
      switch (s.kind) {
        case SettingKind::kInteger:
          CHECK(map.integer(s.key).has_value());
          break;
        case SettingKind::kNumber:
        case SettingKind::kQuantity:
          CHECK(map.number(s.key).has_value());
          break;
        case SettingKind::kBool:
          CHECK(map.flag(s.key).has_value());
          break;
        default:
          CHECK(map.text(s.key).has_value());
          break;
      }
    }
  }
}

TEST_CASE("table defaults are what an empty section reads, and match the specs' initial values",
          "[settings]") {
  // A GPU without an efficiency block takes the table's defaults, which the compute model's
  // struct initial values (used by specs built in code) must not contradict.
  const YamlNodePtr gpu = parse_yaml(
      "name: g\npeak_flops: {bf16: 100 TFLOPS}\nmemory: 80 GiB\nmemory_bandwidth: 2 TB/s\n", "g");
  const GpuSpec read = read_gpu(MapReader(*gpu, "cluster.gpu", YamlMark{}));
  const ComputeEfficiency initial;
  CHECK(read.efficiency.gemm == initial.gemm);
  CHECK(read.efficiency.gemm_half_flops == initial.gemm_half_flops);
  CHECK(read.efficiency.memory == initial.memory);
  CHECK(read.efficiency.kernel_overhead_s == initial.kernel_overhead_s);
  CHECK(read.efficiency.sm_count == initial.sm_count);
  CHECK(read.efficiency.gemm == 0.75);
  // An attention block written empty takes the table's defaults: the struct's initial values.
  const YamlNodePtr gpu2 = parse_yaml(
      "name: g\npeak_flops: {bf16: 100 TFLOPS}\nmemory: 80 GiB\nmemory_bandwidth: 2 TB/s\n"
      "efficiency: {fused_attention: {}, flash_attention: {}}\n",
      "g");
  const GpuSpec read2 = read_gpu(MapReader(*gpu2, "cluster.gpu", YamlMark{}));
  const AttentionEfficiency att;
  for (const AttentionEfficiency* a : {&read2.efficiency.fused, &read2.efficiency.flash}) {
    CHECK(a->forward == att.forward);
    CHECK(a->backward == att.backward);
    CHECK(a->half_seq == att.half_seq);
    CHECK(a->backward_half_seq == att.backward_half_seq);
    CHECK(a->causal_seq == att.causal_seq);
    CHECK(a->half_head_dim == att.half_head_dim);
  }
  CHECK(read.efficiency.gemm_half_flops == 2e9);

  const YamlNodePtr cluster = parse_yaml(
      "name: c\nnodes: 2\ngpus_per_node: 8\n"
      "gpu: {name: g, peak_flops: {bf16: 100 TFLOPS}, memory: 80 GiB, memory_bandwidth: 2 TB/s}\n"
      "nvlink: {bandwidth: 300 GB/s, latency: 1 us}\n"
      "network: {nic_bandwidth: 200 Gbps, latency: 2 us}\n",
      "c");
  const ClusterSpec c = read_cluster(MapReader(*cluster, "cluster", YamlMark{}));
  const NvlinkSpec nvl;
  const NetworkSpec net;
  CHECK(c.nvlink.island_size == 8);  // derived: gpus_per_node
  CHECK(c.nvlink.protocol_efficiency == nvl.protocol_efficiency);
  CHECK(c.nvlink.in_switch_reduction_efficiency == nvl.in_switch_reduction_efficiency);
  CHECK(c.network.topology == net.topology);
  CHECK(c.network.nics_per_node == 8);  // derived: gpus_per_node
  CHECK(c.network.oversubscription == net.oversubscription);
  CHECK(c.network.nodes_per_leaf == net.nodes_per_leaf);
  CHECK(c.network.protocol_efficiency == net.protocol_efficiency);
}

TEST_CASE("in-switch reduction 0 means none, tiny positive values are refused with the limit",
          "[settings]") {
  CHECK(load_error({"cluster.nvlink.in_switch_reduction_efficiency=0"}).empty());
  CHECK(load_error({"cluster.nvlink.in_switch_reduction_efficiency=0.5"}).empty());
  CHECK_THAT(load_error({"cluster.nvlink.in_switch_reduction_efficiency=0.0001"}),
             Catch::Contains("expected 0 or a number in [0.001, 1]"));
  CHECK_THAT(load_error({"cluster.nvlink.bandwidth=1e-300 GB/s"}),
             Catch::Contains("below the lower limit of 1 MB/s"));
  CHECK_THAT(load_error({"cluster.network.nic_bandwidth=1e-30 B/s"}),
             Catch::Contains("below the lower limit of 1 MB/s"));
  CHECK_THAT(load_error({"cluster.gpu.memory_bandwidth=1e-300 GB/s"}),
             Catch::Contains("below the lower limit of 1 GB/s"));
  CHECK_THAT(load_error({"cluster.gpu.peak_flops.bf16=1e-320 TFLOPS"}),
             Catch::Contains("below the lower limit of 1 GFLOPS"));
  CHECK_THAT(load_error({"cluster.gpu.efficiency.gemm=1e-300"}),
             Catch::Contains("expected a number in [0.001, 1]"));
  CHECK_THAT(load_error({"cluster.nvlink.bandwidth=0 GB/s"}),
             Catch::Contains("must be greater than zero"));
}

TEST_CASE("trident schema: JSON rows carry key, type, default, range and doc", "[settings]") {
  const nlohmann::json rows = settings_json();
  REQUIRE(rows.is_array());
  std::size_t declared = 0;
  for (const SettingSection& s : settings_sections()) declared += s.settings.size();
  CHECK(rows.size() == declared);
  bool saw_tp = false;
  for (const nlohmann::json& row : rows) {
    for (const char* field : {"key", "type", "default", "range", "doc"}) {
      INFO(row.dump());
      CHECK(row.contains(field));
    }
    if (row["key"] == "plan.tensor_parallel") {
      saw_tp = true;
      CHECK(row["default"] == "1");
      CHECK(row["megatron"] == "--tensor-model-parallel-size");
    }
  }
  CHECK(saw_tp);
}

TEST_CASE("docs/schema.md is the markdown form of the table", "[settings]") {
  std::ifstream in(repo("docs/schema.md"), std::ios::binary);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  // Regenerate with: build/trident schema --format markdown > docs/schema.md
  CHECK(text.str() == settings_markdown());
}

TEST_CASE("Megatron-LM names are aliases of their keys, in files, --set and did-you-mean",
          "[settings]") {
  CHECK(canonical_key("plan", "tensor_model_parallel_size") == "tensor_parallel");
  CHECK(canonical_key("plan", "use_distributed_optimizer") == "distributed_optimizer");
  CHECK(canonical_key("plan", "recompute_granularity") == "recompute");
  CHECK(canonical_key("plan", "ddp_bucket_size") == "grad_bucket_size");
  CHECK(canonical_key("model", "position_embedding_type") == "position_embedding");
  CHECK(canonical_key("plan", "no_such_name").empty());
  CHECK(canonical_key_path("plan.pipeline_model_parallel_size") == "plan.pipeline_parallel");
  CHECK(canonical_key_path("cluster.nvlink.bandwidth") == "cluster.nvlink.bandwidth");

  const Scenario s =
      load_scenario(repo("scenarios/tiny.yaml"),
                    {"plan.tensor_model_parallel_size=1", "plan.recompute_granularity=selective",
                     "plan.use_distributed_optimizer=true"});
  CHECK(s.plan.tensor == 1);
  CHECK(s.plan.recompute == Recompute::kSelective);
  CHECK(s.plan.distributed_optimizer);
  // Did-you-mean knows the aliases.
  CHECK_THAT(load_error({"plan.tensor_model_paralel_size=2"}),
             Catch::Contains("did you mean `tensor_model_parallel_size`?"));
}

TEST_CASE("num_layers_per_virtual_pipeline_stage sets the chunks, chunks imply interleaving",
          "[settings]") {
  // tiny: 8 layers, p = 2; 2 layers per chunk -> 2 chunks per GPU. (`~` unsets the file's
  // `schedule: 1f1b`.)
  const Scenario s =
      load_scenario(repo("scenarios/tiny.yaml"),
                    {"plan.schedule=~", "plan.num_layers_per_virtual_pipeline_stage=2"});
  CHECK(s.plan.virtual_stages == 2);
  CHECK(s.plan.schedule == ScheduleKind::kInterleaved1F1B);
  CHECK_THAT(load_error({"plan.schedule=~", "plan.num_layers_per_virtual_pipeline_stage=3"}),
             Catch::Contains("num_layers 8 is not divisible by pipeline_parallel × "
                             "num_layers_per_virtual_pipeline_stage = 2 × 3"));
  // virtual_stages > 1 without a schedule means interleaved 1F1B.
  CHECK(load_scenario(repo("scenarios/tiny.yaml"), {"plan.schedule=~", "plan.virtual_stages=2"})
            .plan.schedule == ScheduleKind::kInterleaved1F1B);
}
