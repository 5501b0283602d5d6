// NCCL plans lowered and simulated on SimGrid (lowering/collective_lowering, engine/probes)
// against their closed form (workload/nccl_model collective_plan_time): with nothing else on
// the links they agree exactly, for rings, pipelined hierarchical rings, trees, NVLS and
// NVLS-tree, collapsed or step by step. Every probe runs in a child process.
#include <catch2/catch.hpp>
#include <functional>
#include <sstream>

#include "core/isolated_run.h"
#include "engine/probes.h"
#include "test_support.h"

using namespace trident;
using namespace trident::testing;

namespace {

ClusterSpec probe_cluster() {
  ClusterSpec c = a100_cluster(4);
  c.nvlink.protocol_efficiency = 0.8;
  c.nvlink.in_switch_reduction_efficiency = 0.6;
  c.network.protocol_efficiency = 0.9;
  c.nccl.base_latency[static_cast<int>(CollectiveProtocol::kLL)] = 3e-6;
  c.nccl.base_latency[static_cast<int>(CollectiveProtocol::kSimple)] = 8e-6;
  c.nccl.step_latency[static_cast<int>(CollectiveProtocol::kSimple)] = 2.8e-6;
  c.nccl.nvls_latency = 30e-6;
  c.nccl.pipeline_chunk = 16e6;
  return c;
}

double simulated(const ClusterSpec& c, const CollectivePlan& plan, const std::vector<int>& group,
                 bool collapse) {
  const std::string out = run_isolated([&]() {
    const auto island_of = [&c](int gpu) { return gpu / c.nvlink.island_size; };
    LoweringOptions opt;
    opt.collapse_steps = collapse;
    opt.cluster = &c;
    const auto phases = lower_plan(plan, {group}, island_of, opt);
    int gpus = 0;
    for (int g : group) gpus = std::max(gpus, g + 1);
    std::ostringstream s;
    s.precision(17);
    s << probe_phase_series(c, gpus, {phases}).front();
    return s.str();
  });
  return std::stod(out);
}

std::vector<int> first(int n) {
  std::vector<int> g(n);
  for (int i = 0; i < n; ++i) g[i] = i;
  return g;
}

}  // namespace

TEST_CASE("every NCCL plan simulates in exactly its closed-form time on free links",
          "[engine][collective][nccl]") {
  const ClusterSpec c = probe_cluster();
  struct Case {
    const char* name;
    int gpus;
    CollectiveOp op;
    CollectiveAlgorithm algorithm;
    CollectiveProtocol protocol;
  };
  const auto ar = CollectiveOp::kAllReduce;
  const Case cases[] = {
      {"ring in one island, LL", 8, ar, CollectiveAlgorithm::kRing, CollectiveProtocol::kLL},
      {"hierarchical ring, 4 islands", 32, ar, CollectiveAlgorithm::kRing,
       CollectiveProtocol::kSimple},
      {"hierarchical reduce-scatter", 32, CollectiveOp::kReduceScatter, CollectiveAlgorithm::kRing,
       CollectiveProtocol::kSimple},
      {"hierarchical all-gather", 16, CollectiveOp::kAllGather, CollectiveAlgorithm::kRing,
       CollectiveProtocol::kSimple},
      {"tree across 4 islands", 32, ar, CollectiveAlgorithm::kTree, CollectiveProtocol::kSimple},
      {"NVLS in one island", 8, ar, CollectiveAlgorithm::kNvls, CollectiveProtocol::kSimple},
      {"NVLS-tree across 2 islands", 16, ar, CollectiveAlgorithm::kNvlsTree,
       CollectiveProtocol::kSimple},
  };
  for (const Case& k : cases) {
    const std::vector<int> group = first(k.gpus);
    const auto island_of = [&c](int gpu) { return gpu / c.nvlink.island_size; };
    const CollectiveShape shape = collective_shape(group, island_of);
    for (double S : {1e6, 256e6}) {  // one chunk; 16 chunks
      const CollectivePlan plan = make_collective_plan(k.op, shape, S, c, k.algorithm, k.protocol);
      for (bool collapse : {true, false}) {
        INFO(k.name << ", " << S << " B, " << (collapse ? "collapsed" : "step by step"));
        CHECK(simulated(c, plan, group, collapse) ==
              Approx(collective_plan_time(plan, c, collapse)).epsilon(1e-6));
      }
    }
  }
}

TEST_CASE("a pipelined hierarchical all-reduce beats its stages run one after another",
          "[engine][collective][nccl]") {
  ClusterSpec c = probe_cluster();
  const std::vector<int> group = first(32);
  const auto island_of = [&c](int gpu) { return gpu / c.nvlink.island_size; };
  const CollectivePlan pipelined =
      make_collective_plan(CollectiveOp::kAllReduce, collective_shape(group, island_of), 1e9, c,
                           CollectiveAlgorithm::kRing, CollectiveProtocol::kSimple);
  c.nccl.pipeline_chunk = 1e12;
  const CollectivePlan serial =
      make_collective_plan(CollectiveOp::kAllReduce, collective_shape(group, island_of), 1e9, c,
                           CollectiveAlgorithm::kRing, CollectiveProtocol::kSimple);
  REQUIRE(serial.chunks == 1);
  const double t_pipe = simulated(c, pipelined, group, true);
  const double t_serial = simulated(c, serial, group, true);
  // Serial: 2 x 7/8 S over NVLink plus 2 x 3/4 S/8 over the NICs; pipelined: about the larger.
  const double nvl = 2 * 7.0 / 8 * 1e9 / (300e9 * 0.8), net = 1.5 / 8 * 1e9 / (25e9 * 0.9);
  CHECK(t_serial == Approx(serial.latency + nvl + net).epsilon(0.01));
  CHECK(t_pipe == Approx(pipelined.latency + std::max(nvl, net)).epsilon(0.1));
  CHECK(t_pipe < t_serial);
}
