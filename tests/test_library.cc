// The shipped library (configs/, scenarios/): published parameter counts, GPU files shared by
// clusters, cluster size as a parameter, the papers' plans.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config/scenario.h"
#include "workload/stage_work.h"

using namespace trident;

namespace {

std::string repo(const std::string& rel) { return std::string(TRIDENT_SOURCE_DIR) + "/" + rel; }

}  // namespace

TEST_CASE("shipped models have their published parameter counts", "[library]") {
  struct Published {
    const char* file;
    double params;     // published count
    double tolerance;  // fraction
  };
  // Narayanan et al., SC'21, Table 1 prints one decimal (1.7B is 1.65B rounded): within 1 % or
  // within its rounding (0.05B), whichever is wider.
  const auto table1 = [](double billions) { return std::max(0.01, 0.05 / billions); };
  const Published models[] = {
      {"gpt-1.7b", 1.7e9, table1(1.7)},     {"gpt-3.6b", 3.6e9, table1(3.6)},
      {"gpt-7.5b", 7.5e9, table1(7.5)},     {"gpt-18b", 18.4e9, table1(18.4)},
      {"gpt-39b", 39.1e9, table1(39.1)},    {"gpt-76b", 76.1e9, table1(76.1)},
      {"gpt-145b", 145.6e9, table1(145.6)}, {"gpt-310b", 310.1e9, table1(310.1)},
      {"gpt-530b", 529.6e9, table1(529.6)}, {"gpt-1t", 1008.0e9, table1(1008.0)},
      {"gpt3-175b", 175e9, 0.01},       // Brown et al. 2020
      {"mt-nlg-530b", 530e9, 0.01},     // Smith et al. 2022
      {"bloom-176b", 176.247e9, 0.01},  // BigScience: 176,247,271,424
      {"llama2-7b", 6.74e9, 0.01},      // Touvron et al. 2023
      {"llama2-70b", 68.98e9, 0.01},    // (published as 70B; 68.98B counted)
      {"llama3-8b", 8.03e9, 0.01},      // Meta 2024
      {"llama3-70b", 70.6e9, 0.01},     // Meta 2024
      {"llama3-405b", 405.9e9, 0.01},   // Meta 2024
  };
  for (const Published& p : models) {
    INFO(p.file);
    const ModelSpec m = load_model_file(repo("configs/models/") + p.file + ".yaml");
    CHECK(model_params(m) == Approx(p.params).epsilon(p.tolerance));
  }
}

TEST_CASE("Llama models are gated, grouped-query and untied", "[library]") {
  for (const char* file : {"llama2-7b", "llama2-70b", "llama3-8b", "llama3-70b", "llama3-405b"}) {
    INFO(file);
    const ModelSpec m = load_model_file(repo("configs/models/") + file + ".yaml");
    CHECK(m.swiglu);
    CHECK(m.untie_embeddings_and_output_weights);
    CHECK_FALSE(m.learned_position_embeddings);
    CHECK(m.num_attention_heads % m.num_query_groups == 0);
  }
  CHECK(load_model_file(repo("configs/models/llama3-70b.yaml")).num_query_groups == 8);
  CHECK(load_model_file(repo("configs/models/llama3-8b.yaml")).vocab_size == 128256);
  CHECK(load_model_file(repo("configs/models/llama2-7b.yaml")).vocab_size == 32000);
  // An untied output matrix is counted once more than a tied one.
  ModelSpec m = load_model_file(repo("configs/models/llama3-8b.yaml"));
  const double untied = model_params(m);
  m.untie_embeddings_and_output_weights = false;
  CHECK(untied - model_params(m) == Approx(128256.0 * 4096));
}

TEST_CASE("clusters share GPU files, and each GPU's figures exist once", "[library]") {
  const ClusterSpec a100 = load_cluster_file(repo("configs/clusters/dgx-a100-superpod.yaml"));
  const ClusterSpec tiny = load_cluster_file(repo("configs/clusters/tiny-2node.yaml"));
  CHECK(a100.gpu.name == "A100-SXM4-80GB");
  CHECK(tiny.gpu.name == a100.gpu.name);
  CHECK(tiny.gpu.efficiency.gemm == a100.gpu.efficiency.gemm);
  CHECK(tiny.gpu.efficiency.sm_count == a100.gpu.efficiency.sm_count);
  CHECK(a100.peak(Precision::kBf16) == 312e12);

  const ClusterSpec h100 = load_cluster_file(repo("configs/clusters/dgx-h100.yaml"));
  CHECK(h100.peak(Precision::kBf16) == 989e12);
  CHECK(h100.gpu.memory_bandwidth == 3350e9);
  CHECK(h100.nvlink.bandwidth == 450e9);
  CHECK(h100.network.nic_bandwidth == 50e9);  // 400 Gbps
  // Each GPU has its own fitted compute model (scripts/fit_compute_model.py).
  CHECK(h100.gpu.architecture == GpuArchitecture::kHopper);
  CHECK(h100.peak(Precision::kFp8) == 1979e12);
  CHECK(h100.gpu.efficiency.sm_count == 132);
  CHECK(h100.gpu.efficiency.by_precision.count(Precision::kFp8) == 1);

  const ClusterSpec h200 = load_cluster_file(repo("configs/clusters/hgx-h200.yaml"));
  CHECK(h200.gpu.memory_bytes == 141e9);
  CHECK(h200.gpu.memory_bandwidth == 4800e9);
  CHECK(h200.nvlink.protocol_efficiency == Approx(368.0 / 450).epsilon(0.01));

  const ClusterSpec b200 = load_cluster_file(repo("configs/clusters/hgx-b200.yaml"));
  CHECK(b200.peak(Precision::kBf16) == 2250e12);
  CHECK(b200.peak(Precision::kFp8) == 4500e12);
  CHECK(b200.peak(Precision::kFp4) == 9000e12);
  CHECK(b200.gpu.efficiency.sm_count == 148);
  CHECK(b200.nvlink.bandwidth == 900e9);

  const ClusterSpec nvl72 = load_cluster_file(repo("configs/clusters/gb200-nvl72.yaml"));
  CHECK(nvl72.peak(Precision::kBf16) == 2500e12);
  CHECK(nvl72.peak(Precision::kFp8) == 5000e12);
  CHECK(nvl72.gpu.architecture == GpuArchitecture::kBlackwell);
  CHECK(nvl72.gpus_per_node == 4);
  CHECK(nvl72.nvlink.island_size == 72);
  CHECK(nvl72.total_gpus() % 72 == 0);
}

TEST_CASE("Blackwell Ultra: GB300 NVL72 and HGX B300 carry their published figures", "[library]") {
  // configs/gpus/{gb300,b300}.yaml and docs/calibration.md ("Hardware"): dense peaks (sparse
  // BF16/FP8 figures halved, FP4 published dense), 288 GB HBM3e at 8 TB/s, 160 SMs.
  const ClusterSpec nvl72 = load_cluster_file(repo("configs/clusters/gb300-nvl72.yaml"));
  CHECK(nvl72.gpu.name == "GB300");
  CHECK(nvl72.gpu.architecture == GpuArchitecture::kBlackwell);
  CHECK(nvl72.peak(Precision::kBf16) == 2500e12);
  CHECK(nvl72.peak(Precision::kFp16) == 2500e12);
  CHECK(nvl72.peak(Precision::kFp8) == 5000e12);
  CHECK(nvl72.peak(Precision::kFp4) == 15000e12);
  CHECK(nvl72.gpu.memory_bytes == 288e9);
  CHECK(nvl72.gpu.memory_bandwidth == 8000e9);
  CHECK(nvl72.gpu.efficiency.sm_count == 160);
  CHECK(nvl72.gpus_per_node == 4);
  CHECK(nvl72.nvlink.island_size == 72);
  CHECK(nvl72.total_gpus() % 72 == 0);
  CHECK(nvl72.nvlink.bandwidth == 900e9);  // 1.8 TB/s both ways
  CHECK(nvl72.network.nics_per_node == 4);
  CHECK(nvl72.network.nic_bandwidth == 100e9);  // ConnectX-8, 800 Gb/s
  CHECK(nvl72.nccl.nvls_latency > 0);           // scripts/fit_collectives.py wrote its block

  const ClusterSpec b300 = load_cluster_file(repo("configs/clusters/hgx-b300.yaml"));
  CHECK(b300.gpu.name == "B300");
  CHECK(b300.gpu.architecture == GpuArchitecture::kBlackwell);
  CHECK(b300.peak(Precision::kBf16) == 2250e12);
  CHECK(b300.peak(Precision::kFp8) == 4500e12);
  CHECK(b300.peak(Precision::kFp4) == 13500e12);
  CHECK(b300.gpu.memory_bytes == 288e9);
  CHECK(b300.gpu.memory_bandwidth == 8000e9);
  CHECK(b300.gpu.efficiency.sm_count == 160);
  CHECK(b300.gpus_per_node == 8);
  CHECK(b300.nvlink.island_size == 8);
  CHECK(b300.nvlink.bandwidth == 900e9);
  CHECK(b300.network.nics_per_node == 8);
  CHECK(b300.network.nic_bandwidth == 100e9);
  CHECK(b300.nccl.nvls_latency > 0);

  // No Blackwell Ultra kernel data: the GB200's fitted fractions of peak (scripts/
  // fit_compute_model.py), so a 16-bit GEMM runs at the GB200's fraction of its peak.
  const ClusterSpec gb200 = load_cluster_file(repo("configs/clusters/gb200-nvl72.yaml"));
  CHECK(nvl72.gpu.efficiency.gemm == gb200.gpu.efficiency.gemm);
  CHECK(b300.gpu.efficiency.gemm == gb200.gpu.efficiency.gemm);
  CHECK(nvl72.gpu.efficiency.in_training == gb200.gpu.efficiency.in_training);

  // The shipped GB300 scenario and Llama 3 8B on one HGX B300 node fit in HBM (they simulate
  // in tests/test_list_cli.cc: this binary runs no SimGrid).
  const Scenario rack = load_scenario(repo("scenarios/llama3-70b-gb300-nvl72.yaml"), {});
  CHECK(rack.cluster.name == "gb300-nvl72");
  CHECK(rack.plan.gpus() == 128);
  const double gib = 1u << 30;
  CHECK(memory_margin_bytes(rack.cluster, build_workload(rack)) > 100 * gib);
  const Scenario node =
      load_scenario(repo("scenarios/llama3-8b-dgx-h100.yaml"), {"cluster=hgx-b300"});
  CHECK(node.cluster.name == "hgx-b300");
  CHECK(node.plan.gpus() == 8);
  CHECK(memory_margin_bytes(node.cluster, build_workload(node)) > 100 * gib);
}

TEST_CASE("cluster size is a parameter a scenario overrides", "[library]") {
  const Scenario s = load_scenario(repo("scenarios/llama3-70b-dgx-h100.yaml"), {});
  CHECK(s.cluster.total_gpus() == 512);  // overrides: cluster.nodes: 64
  CHECK(s.plan.gpus() == 512);
  CHECK(s.plan.num_microbatches == 64);
  CHECK(s.model.seq_length == 8192);
  const Scenario more =
      load_scenario(repo("scenarios/llama3-70b-dgx-h100.yaml"), {"cluster.nodes=128"});
  CHECK(more.cluster.total_gpus() == 1024);  // --set comes after the file's overrides
  CHECK_THROWS_WITH(load_scenario(repo("scenarios/gpt3-175b-3d.yaml"), {"cluster.nodes=64"}),
                    Catch::Contains("plan uses 1024 GPUs but cluster has 512"));
}

TEST_CASE("the shipped scenarios resolve to their papers' plans", "[library]") {
  const Scenario t = load_scenario(repo("scenarios/gpt-1t-3072-a100.yaml"), {});
  CHECK(t.plan.gpus() == 3072);
  CHECK(t.plan.num_microbatches == 512);
  CHECK(model_params(t.model) == Approx(1008e9).epsilon(0.001));

  const Scenario b = load_scenario(repo("scenarios/bloom-176b-384-a100.yaml"), {});
  CHECK(b.plan.gpus() == 384);
  CHECK(b.plan.pipeline_layers == std::vector<int>{5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5});
  CHECK(b.plan.num_microbatches == 128);
  const Workload w = build_workload(b);
  CHECK(w.stages.front().num_layers == 5);
  CHECK(w.stages[1].num_layers == 6);
}
