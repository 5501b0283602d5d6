// Optimizer CPU offload (workload/optimizer_offload.h): the offloaded share of the optimizer
// state leaves the GPU for the host, the bytes each way, the CPU step at the host's DRAM
// bandwidth, and the step's timeline with and without overlapped copies.
#include <catch2/catch.hpp>
#include <string>

#include "config/scenario.h"
#include "test_support.h"
#include "workload/optimizer_offload.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

Scenario h100(std::vector<std::string> sets) {
  sets.push_back("plan.use_precision_aware_optimizer=true");
  // A full fp32 master (12 B of state per parameter), not its remainders beside the bf16
  // parameter (10 B): the test counts what moves to the host.
  sets.push_back("plan.store_param_remainders=false");
  return load_scenario(source_path("scenarios/llama3-70b-dgx-h100.yaml"), sets);
}

}  // namespace

TEST_CASE("optimizer offload: fraction 1 moves the whole optimizer state to the host",
          "[workload][offload][memory]") {
  const Workload none = build_workload(h100({}));
  const Workload zero = build_workload(
      h100({"plan.optimizer_cpu_offload=true", "plan.optimizer_offload_fraction=0"}));
  const Workload all = build_workload(h100({"plan.optimizer_cpu_offload=true"}));
  const Workload half = build_workload(
      h100({"plan.optimizer_cpu_offload=true", "plan.optimizer_offload_fraction=0.5"}));
  for (int s = 0; s < 4; ++s) {
    const StageMemory& m = none.stages[s].memory;
    // fp32 master and moments, 12 B per parameter of the GPU's shard (d = 16).
    const double shard = none.stages[s].params_per_gpu / 16;
    CHECK(m.optimizer == Approx(shard * 12).epsilon(1e-12));
    CHECK(zero.stages[s].memory.optimizer == m.optimizer);
    CHECK(zero.stages[s].memory.host_optimizer == 0);
    CHECK(all.stages[s].memory.optimizer == 0);
    CHECK(half.stages[s].memory.optimizer == Approx(m.optimizer / 2).epsilon(1e-12));
    // The host: fp32 master, both moments and the pinned gradient, 16 B per parameter.
    CHECK(all.stages[s].memory.host_optimizer == Approx(shard * 16).epsilon(1e-12));
    CHECK(all.stages[s].memory.weights == m.weights);
    CHECK(all.stages[s].memory.activations == m.activations);
    CHECK(all.stages[s].memory.total() == Approx(m.total() - m.optimizer).epsilon(1e-12));
  }
}

TEST_CASE("optimizer offload: fp32 gradients down, fp32 weights up, CPU Adam at DRAM speed",
          "[workload][offload]") {
  const Scenario sc =
      h100({"plan.optimizer_cpu_offload=true", "plan.optimizer_offload_fraction=0.25"});
  const Workload w = build_workload(sc);
  const StageWork& st = w.stages[1];
  const double shard = st.params_per_gpu / 16 * 0.25;
  CHECK(st.offload.params == Approx(shard).epsilon(1e-12));
  CHECK(st.offload.d2h_bytes == Approx(shard * 4).epsilon(1e-12));
  CHECK(st.offload.h2d_bytes == Approx(shard * 4).epsilon(1e-12));
  CHECK(st.offload.d2h_s == Approx(shard * 4 / 52e9).epsilon(1e-12));
  CHECK(st.offload.h2d_s == Approx(shard * 4 / 51e9).epsilon(1e-12));
  // 8 GPUs share the node's 614.4 GB/s; fused AdamW moves 28 B per parameter.
  CHECK(st.offload.cpu_s == Approx(shard * 28 / (614.4e9 / 8)).epsilon(1e-12));
  // The GPU steps the other three quarters.
  const Workload gpu_only = build_workload(h100({}));
  CHECK(st.optimizer_s < gpu_only.stages[1].optimizer_s);
}

TEST_CASE("optimizer offload: the step's timeline, serial and overlapped", "[workload][offload]") {
  OptimizerOffload o;
  o.active = true;
  o.params = 1;
  o.d2h_s = 1;
  o.cpu_s = 2;
  o.h2d_s = 1;
  o.pieces = 4;
  // One stream: gradients down, the GPU's 0.5 s beside the CPU's 2 s, weights up.
  const OffloadTimes serial = offload_times(o, 0.5);
  CHECK(serial.gpu_start == 1);
  CHECK(serial.gpu_end == 1.5);
  CHECK(serial.cpu_end == 3);
  CHECK(serial.end == 4);
  // Overlapped: 4 pieces of 0.25 / 0.5 / 0.25 s: the first piece's copy, every CPU step, the
  // last piece's copy back.
  o.overlap = true;
  const OffloadTimes piped = offload_times(o, 0.5);
  CHECK(piped.gpu_start == 0);
  CHECK(piped.gpu_end == 0.5);
  CHECK(piped.cpu_end == 2.25);
  CHECK(piped.end == 2.5);
  // A GPU step longer than the host's pipeline holds every weight copy back until it ends.
  CHECK(offload_times(o, 3).end == 4);
  // One piece: the overlap gains only the GPU's step.
  o.pieces = 1;
  CHECK(offload_times(o, 0.5).end == 4);
  o.active = false;
  CHECK(offload_times(o, 0.5).end == 0.5);
}
