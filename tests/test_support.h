// Scenarios built in code for tests (no YAML), and helpers to run simulations in child
// processes (SimGrid allows one engine per process).
#ifndef TRIDENT_TESTS_TEST_SUPPORT_H_
#define TRIDENT_TESTS_TEST_SUPPORT_H_

#include <string>

#include "config/scenario.h"

namespace trident::testing {

// A100-like node: 8 GPUs, 312 TFLOPS bf16, 300 GB/s NVLink, 8 x 200 Gb/s NICs, fat tree.
inline ClusterSpec a100_cluster(int nodes) {
  ClusterSpec c;
  c.name = "test-a100";
  c.gpu.name = "A100";
  c.gpu.peak_flops[Precision::kBf16] = 312e12;
  c.gpu.memory_bytes = 80.0 * (1ull << 30);
  c.gpu.memory_bandwidth = 2039e9;
  c.nodes = nodes;
  c.gpus_per_node = 8;
  c.nvlink.island_size = 8;
  c.nvlink.bandwidth = 300e9;
  c.nvlink.latency = 2e-6;
  c.network.topology = Topology::kFatTree;
  c.network.nics_per_node = 8;
  c.network.nic_bandwidth = 25e9;
  c.network.latency = 5e-6;
  return c;
}

// Communication made free and memory-bound kernels instant: only GEMMs take time.
inline ClusterSpec free_comm_cluster(int nodes) {
  ClusterSpec c = a100_cluster(nodes);
  c.nvlink.bandwidth = 1e30;
  c.nvlink.latency = 0;
  c.network.nic_bandwidth = 1e30;
  c.network.latency = 0;
  c.gpu.memory_bandwidth = 1e30;
  c.gpu.efficiency.kernel_overhead_s = 0;
  return c;
}

inline ModelSpec gpt_model(int layers, int hidden, int heads, int seq, long vocab) {
  ModelSpec m;
  m.name = "test-gpt";
  m.num_layers = layers;
  m.hidden_size = hidden;
  m.num_attention_heads = heads;
  m.num_query_groups = heads;
  m.ffn_hidden_size = 4L * hidden;
  m.seq_length = seq;
  m.vocab_size = vocab;
  return m;
}

// A small SwiGLU MoE: 4 layers, hidden 2048, `experts` experts of `expert_ffn`, top-`topk` in
// every layer, sequence `seq`.
inline ModelSpec small_moe_model(int experts = 16, int topk = 2, long expert_ffn = 2048,
                                 int seq = 2048) {
  ModelSpec m = gpt_model(4, 2048, 16, seq, 32000);
  m.swiglu = true;
  m.ffn_hidden_size = 5632;
  m.num_experts = experts;
  m.moe_router_topk = topk;
  m.moe_ffn_hidden_size = expert_ffn;
  m.moe_layer_pattern.assign(m.num_layers, 1);
  return m;
}

inline PlanSpec plan(int t, int p, int d, int micro, int microbatches, ScheduleKind schedule) {
  PlanSpec pl;
  pl.tensor = t;
  pl.pipeline = p;
  pl.data = d;
  pl.micro_batch_size = micro;
  pl.num_microbatches = microbatches;
  pl.global_batch_size = micro * microbatches * d;
  pl.schedule = schedule;
  return pl;
}

inline Scenario scenario(ClusterSpec c, ModelSpec m, PlanSpec p) {
  Scenario s;
  s.path = "test";
  s.cluster = std::move(c);
  s.model = std::move(m);
  s.plan = p;
  return s;
}

// Returns the path of a file in the source tree.
inline std::string source_path(const std::string& rel) {
  return std::string(TRIDENT_SOURCE_DIR) + "/" + rel;
}

}  // namespace trident::testing

#endif  // TRIDENT_TESTS_TEST_SUPPORT_H_
