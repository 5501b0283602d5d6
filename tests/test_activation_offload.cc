// Megatron-Core's fine-grained activation offloading of the experts' inputs
// (workload/activation_offload): the bytes a MoE layer moves, the device memory they free, and
// the wait a pass adds when its copy outlasts the pass's kernels.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config_support.h"
#include "workload/activation_offload.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

// Qwen3-30B-A3B on 32 H100 (t=2 ETP=1 EP=8, 48 MoE layers, h 2048, top-8, f_moe 768), whose
// cluster declares its host links.
Scenario qwen3(std::vector<std::string> sets = {}) {
  return load_scenario(repo("scenarios/qwen3-30b-a3b-etp1-dgx-h100.yaml"), sets);
}

}  // namespace

TEST_CASE("offloaded bytes: the experts' FC1 input and the activation's input", "[offload]") {
  // ETP T k / t = 1 x 4096 x 8 / 2 routed copies on a rank, balanced.
  const double copies = 4096.0 * 8 / 2;
  CHECK(offloaded_activation_bytes(qwen3().model, qwen3().plan) == 0);
  const Scenario fc1 = qwen3({"plan.activation_offload=[expert_fc1]"});
  CHECK(offloaded_activation_bytes(fc1.model, fc1.plan) == Approx(copies * 2048 * 2));
  const Scenario act = qwen3({"plan.activation_offload=[moe_act]"});
  CHECK(offloaded_activation_bytes(act.model, act.plan) == Approx(copies * 2 * 768 * 2));
  // Recomputing the whole MoE MLP keeps nothing to offload.
  const Scenario moe =
      qwen3({"plan.activation_offload=[expert_fc1]", "plan.recompute_modules=[moe]"});
  CHECK(offloaded_activation_bytes(moe.model, moe.plan) == 0);
  CHECK(offload_wait_s(100, 10, 4) == Approx(6));
  CHECK(offload_wait_s(100, 10, 20) == 0);
}

TEST_CASE("offloading frees device activations; slow host links expose their copies",
          "[offload][memory]") {
  const Workload base = build_workload(qwen3());
  const Scenario sc = qwen3({"plan.activation_offload=[expert_fc1]"});
  const Workload fast = build_workload(sc);
  const double bytes = offloaded_activation_bytes(sc.model, sc.plan);
  const ChunkWork& b = base.stages[0].chunks[0];
  const ChunkWork& f = fast.stages[0].chunks[0];
  CHECK(b.activation_bytes - f.activation_bytes == Approx(48 * bytes));
  CHECK(fast.stages[0].memory.activations < base.stages[0].memory.activations);
  // Each pass waits at most for its whole copy, at least for what the copy takes beyond the
  // pass's kernels (H100's PCIe link moves 67 MB a layer in about 1.3 ms or more).
  const double d2h_s = 48 * bytes / sc.cluster.host.device_to_host_bandwidth;
  CHECK(f.forward.compute_s - b.forward.compute_s >= 0);
  CHECK(f.forward.compute_s - b.forward.compute_s <= d2h_s);
  CHECK(f.forward.compute_s - b.forward.compute_s >= d2h_s - b.forward.compute_s);
  // At 1 GB/s each layer waits for its copy beyond its kernels, in both passes.
  const Workload slow = build_workload(
      qwen3({"plan.activation_offload=[expert_fc1]", "cluster.host.device_to_host_bandwidth=1 GB/s",
             "cluster.host.host_to_device_bandwidth=1 GB/s"}));
  const ChunkWork& s = slow.stages[0].chunks[0];
  const double copies_s = 48 * bytes / 1e9;
  CHECK(s.forward.compute_s - b.forward.compute_s <= copies_s);
  CHECK(s.forward.compute_s - b.forward.compute_s >= copies_s - b.forward.compute_s);
  CHECK(s.backward.compute_s - b.backward.compute_s <= copies_s);
  CHECK(s.backward.compute_s - b.backward.compute_s >= copies_s - b.backward.compute_s);
}
