// The MoE MLP's kernels and collectives (workload/moe_ops): routing load, tokens per expert,
// the dispatch and combine sizes, the grouped expert GEMM, and MoE memory per GPU.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config_support.h"
#include "workload/compute_model.h"
#include "workload/moe_model.h"
#include "workload/moe_ops.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

const Op* find_op(const std::vector<Op>& ops, const std::string& name) {
  for (const Op& op : ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("the busiest rank's load from the busiest expert's", "[moe]") {
  Scenario sc = tiny_moe();
  CHECK(moe_expert_load(sc.model, sc.plan) == 1);  // balanced
  sc.plan.moe_load_imbalance = 2;
  // 8 experts, EP 2: 4 per rank; the busiest expert at 2x, the other 7 share 6 evenly.
  CHECK(moe_expert_load(sc.model, sc.plan) == Approx((2 + 3 * 6.0 / 7) / 4).epsilon(1e-15));
  sc.plan.expert_parallel = 8;  // one expert per rank: the rank is the expert
  CHECK(moe_expert_load(sc.model, sc.plan) == 2);
  sc.plan.expert_parallel = 1;  // every expert on each rank: no rank is busier
  CHECK(moe_expert_load(sc.model, sc.plan) == Approx(1).epsilon(1e-15));
  // A capacity factor drops what exceeds it; padding runs every expert at capacity.
  sc.plan.expert_parallel = 8;
  sc.plan.moe_capacity_factor = 1.25;
  CHECK(moe_busiest_expert_load(sc.plan) == 1.25);
  CHECK(moe_expert_load(sc.model, sc.plan) == 1.25);
  sc.plan.moe_load_imbalance = 1;
  CHECK(moe_expert_load(sc.model, sc.plan) == 1);
  sc.plan.moe_pad_to_capacity = true;
  CHECK(moe_expert_load(sc.model, sc.plan) == 1.25);
}

TEST_CASE("tokens per expert and the dispatch sizes of a MoE layer", "[moe]") {
  const Scenario sc = tiny_moe();
  // EP 2 x b 1 x s 1024 x top-2 / 8 experts.
  CHECK(moe_tokens_per_expert(sc.model, sc.plan) == 2 * 1024 * 2 / 8.0);
  const LayerDims d = make_layer_dims(sc.model, sc.plan);
  const std::vector<Op> fwd = layer_forward_ops(d, true);
  const double T = 1024, h = 1024, e = 2, t = 2;
  const Op* dispatch = find_op(fwd, "ep_a2a_dispatch");
  const Op* combine = find_op(fwd, "ep_a2a_combine");
  REQUIRE(dispatch != nullptr);
  REQUIRE(combine != nullptr);
  CHECK(dispatch->kind == OpKind::kEpCollective);
  CHECK(dispatch->collective == CollectiveOp::kAllToAll);
  CHECK(dispatch->bytes == T * 2 * h * e / t);  // each TP rank sends 1/t of the routed copies
  CHECK(combine->bytes == dispatch->bytes);
  CHECK(combine->combine);
  // Then the TP group gathers the received copies: the full buffer of T k h.
  const Op* gather = find_op(fwd, "tp_ag_experts");
  REQUIRE(gather != nullptr);
  CHECK(gather->bytes == T * 2 * h * e);
  // 4 local experts of EP T k / E = 512 tokens each, split over t like a dense MLP.
  const Op* fc1 = find_op(fwd, "experts_fc1");
  REQUIRE(fc1 != nullptr);
  CHECK(fc1->grouped);
  CHECK(fc1->gemm.m == 512);
  CHECK(fc1->gemm.n == 2 * 512 / t);
  CHECK(fc1->gemm.batch == 4);
  // Backward: the experts' GEMMs are twice the forward FLOPs, as a dense layer's.
  const std::vector<Op> bwd = layer_backward_ops(d, true);
  double f = 0, b = 0;
  for (const Op& op : fwd) f += op.grouped ? op.flops() : 0;
  for (const Op& op : bwd) b += op.grouped ? op.flops() : 0;
  CHECK(b == 2 * f);
  // EP 1: no expert-parallel collective.
  const Scenario one = tiny_moe({"plan.expert_model_parallel_size=1"});
  for (const Op& op : layer_forward_ops(make_layer_dims(one.model, one.plan), true)) {
    CHECK(op.kind != OpKind::kEpCollective);
  }
}

TEST_CASE("a grouped GEMM ramps by one expert's size", "[moe][compute]") {
  GpuSpec g;
  g.peak_flops[Precision::kBf16] = 1000e12;
  g.memory_bandwidth = 1e15;  // compute-bound
  g.efficiency.gemm = 0.8;
  g.efficiency.gemm_half_flops = 2e9;
  const ComputeModel cm(g, Precision::kBf16);
  const GemmShape one{256, 1024, 4096, 1}, grouped{256, 1024, 4096, 16};
  // Without waves or kernel overhead: 16 times one expert's GEMM, slower than one GEMM of the
  // same FLOPs, whose ramp sees 16 times the size.
  CHECK(cm.grouped_gemm_time(grouped, Precision::kBf16) ==
        Approx(16 * cm.gemm_time(one, Precision::kBf16)).epsilon(1e-12));
  CHECK(cm.grouped_gemm_time(grouped, Precision::kBf16) > cm.gemm_time(grouped, Precision::kBf16));
  const double f1 = 2.0 * 256 * 1024 * 4096;
  CHECK(cm.grouped_gemm_time(grouped, Precision::kBf16) ==
        Approx(16 * f1 / (1000e12 * 0.8 * f1 / (f1 + 2e9))).epsilon(1e-12));
}

TEST_CASE("MoE memory: experts divided by EP, activations and dispatch buffers", "[moe][memory]") {
  const Scenario sc = tiny_moe();
  const Workload w = build_workload(sc);
  const ModelSpec& m = sc.model;
  const double t = 2, h = 1024, T = 1024;
  // 4 layers per stage; every layer MoE: non-expert weights / t, 8 / EP = 4 experts / t.
  const double dense = (attention_params(m) + router_params(m) + 4 * h) / t;  // 2 LayerNorms
  const double experts = 4 * routed_expert_params(m) / t;
  const StageWork& mid = w.stages[0];
  const double embed = 32000 * h / t + 1024 * h;  // vocab-parallel and learned positions
  CHECK(mid.expert_params_per_gpu == Approx(4 * experts).epsilon(1e-12));
  CHECK(mid.params_per_gpu == Approx(4 * (dense + experts) + embed).epsilon(1e-12));
  // Expert gradients reduce over d / EP = 1 GPU; the rest over d = 2.
  CHECK(mid.expert_grad_bytes == Approx(4 * experts * 4).epsilon(1e-12));
  CHECK(mid.grad_bytes == Approx((4 * dense + embed) * 4).epsilon(1e-12));
  // Dispatch buffers: 2 T k h / t 16-bit elements.
  CHECK(mid.memory.dispatch_buffers == 2 * T * 2 * h / t * 2);
  // Activations: the routed copies (T k h), fc1 and SwiGLU outputs (T k 3 f / t), the routing
  // probabilities (4 T k), in place of the dense MLP's (2g + 2) f / h of T h / t.
  const double delta =
      T * 2 * (h + 3 * 512 / t) * 2 + 4 * T * 2 - dense_mlp_activation_bytes(m, sc.plan);
  CHECK(moe_activation_delta_bytes(m, sc.plan) == Approx(delta).epsilon(1e-12));
  // Full recomputation keeps only each layer's input.
  const Scenario full = tiny_moe({"plan.recompute=full"});
  CHECK(moe_activation_delta_bytes(full.model, full.plan) == 0);
}

TEST_CASE("moe_grouped_gemm false: one GEMM per local expert in turn", "[moe][compute]") {
  Scenario grouped = tiny_moe();
  Scenario sequential = tiny_moe({"plan.moe_grouped_gemm=false"});
  // The GPU's time alone: no host launch queue, whose waits the longer GEMMs would hide.
  grouped.plan.stack.host_time_per_kernel_s = 0;
  sequential.plan.stack.host_time_per_kernel_s = 0;
  const LayerDims d = make_layer_dims(sequential.model, sequential.plan);
  const std::vector<Op> ops = layer_forward_ops(d, true);
  const auto fc1 =
      std::find_if(ops.begin(), ops.end(), [](const Op& op) { return op.name == "experts_fc1"; });
  REQUIRE(fc1 != ops.end());
  CHECK(fc1->sequential);
  CHECK_FALSE(fc1->grouped);
  CHECK(fc1->gemm.batch == 4);  // 8 experts over EP 2
  // E / EP GEMMs of one expert each: batch x one GEMM's time, kernel overheads included, in
  // place of one grouped GEMM, for FC1 and FC2 of each of stage 0's 4 MoE layers.
  const ComputeModel cm(sequential.cluster.gpu, sequential.plan.precision);
  double extra = 0;
  for (const char* name : {"experts_fc1", "experts_fc2"}) {
    const auto op =
        std::find_if(ops.begin(), ops.end(), [&](const Op& o) { return o.name == name; });
    REQUIRE(op != ops.end());
    GemmShape one = op->gemm;
    one.batch = 1;
    extra += 4 * cm.gemm_time(one) - cm.grouped_gemm_time(op->gemm, Precision::kBf16);
  }
  extra /= cm.in_step(Precision::kBf16);
  // The same FLOPs either way, more time one by one.
  const Workload wg = build_workload(grouped), ws = build_workload(sequential);
  CHECK(ws.model_flops_per_step == Approx(wg.model_flops_per_step));
  CHECK(ws.stages[0].chunks[0].forward.compute_s - wg.stages[0].chunks[0].forward.compute_s ==
        Approx(4 * extra));
}
