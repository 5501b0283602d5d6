// The host launch queue (workload/host_launch.h): kernels wait for a slow host, CUDA graphs
// launch a captured part once, a host-device sync empties the queue; and what the plan's
// settings make of it in a MoE layer's op lists.
#include <catch2/catch.hpp>

#include "config_support.h"
#include "test_support.h"
#include "workload/host_launch.h"
#include "workload/layer_ops.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

constexpr double kUs = 1.0 / 1024 / 1024;  // about a microsecond, exact in binary

HostLaunch eager(double per_kernel_s) {
  HostLaunch h;
  h.per_kernel_s = per_kernel_s;
  return h;
}

}  // namespace

TEST_CASE("host launch: kernels wait for a host that launches slower than they run",
          "[host_launch]") {
  std::vector<Op> ops(4);
  ops[2].kind = OpKind::kTpCollective;  // launches no kernel: its time is kept
  const std::vector<double> gpu = {1 * kUs, 1 * kUs, 0.5 * kUs, 1 * kUs};
  // Issued at 2, 4 and 6: the first waits 2, the next ones 1 each.
  const std::vector<double> times = host_bound_times(ops, gpu, eager(2 * kUs));
  CHECK(times[0] == 3 * kUs);
  CHECK(times[1] == 2 * kUs);
  CHECK(times[2] == 0.5 * kUs);
  CHECK(times[3] == 2 * kUs);
  // Long kernels let the host run ahead: nothing waits after the first.
  const std::vector<double> long_gpu = {10 * kUs, 1 * kUs, 0, 1 * kUs};
  const std::vector<double> ahead = host_bound_times(ops, long_gpu, eager(2 * kUs));
  CHECK(ahead[0] == 12 * kUs);
  CHECK(ahead[1] == 1 * kUs);
  CHECK(ahead[3] == 1 * kUs);
}

TEST_CASE("host launch: a grouped GEMM costs one launch per expert, a sync empties the queue",
          "[host_launch]") {
  std::vector<Op> ops(3);
  ops[0].launches = 4;  // issued at 8: waits 8
  const std::vector<double> gpu = {1 * kUs, 20 * kUs, 1 * kUs};
  const std::vector<double> q = host_bound_times(ops, gpu, eager(2 * kUs));
  CHECK(q[0] == 9 * kUs);
  CHECK(q[1] == 21 * kUs);  // issued at 10, the GPU free at 9: waits 1
  // Without the sync the host is 18 us ahead after op 1; with it, op 2 waits a whole launch.
  CHECK(q[2] == 1 * kUs);
  ops[2].host_sync = true;
  const std::vector<double> s = host_bound_times(ops, gpu, eager(2 * kUs));
  CHECK(s[2] == 3 * kUs);
}

TEST_CASE("host launch: a captured part costs one launch, full_iteration none", "[host_launch]") {
  std::vector<Op> ops(4);
  for (Op& op : ops) op.graph_module = kGraphAttn;
  ops[3].graph_module = kGraphMlp;
  const std::vector<double> gpu(4, 1 * kUs);
  HostLaunch h = eager(2 * kUs);
  h.graphed = kGraphAttn;
  // One graph launch (2) for ops 0-2, which then run back to back; op 3 eager: issued at 4.
  const std::vector<double> t = host_bound_times(ops, gpu, h);
  CHECK(t[0] == 3 * kUs);
  CHECK(t[1] == 1 * kUs);
  CHECK(t[2] == 1 * kUs);
  CHECK(t[3] == 1 * kUs);
  h.graphed = kGraphAttn | kGraphMlp;  // two parts: two graph launches, the second hidden
  CHECK(host_bound_times(ops, gpu, h)[3] == 1 * kUs);
  h.graphed = kGraphFullIteration;
  CHECK_FALSE(h.active());
  CHECK(host_bound_times(ops, gpu, h) == gpu);
}

TEST_CASE("host launch: a MoE layer's forward syncs at its dispatch unless sync-free",
          "[host_launch]") {
  Scenario sc = tiny_moe();
  sc.plan.moe_dispatcher = MoeDispatcher::kAllToAll;
  const auto syncs = [](const std::vector<Op>& ops) {
    int n = 0;
    for (const Op& op : ops) n += op.host_sync ? 1 : 0;
    return n;
  };
  const LayerDims d = make_layer_dims(sc.model, sc.plan);
  CHECK(syncs(layer_forward_ops(d, true)) == 1);
  CHECK(syncs(layer_backward_ops(d, true)) == 0);  // the backward reuses the counts
  CHECK(syncs(layer_forward_ops(d, false)) == 0);
  sc.plan.moe_capacity_factor = 1;
  sc.plan.moe_pad_to_capacity = true;  // drop-and-pad: shapes known on the host
  CHECK(syncs(layer_forward_ops(make_layer_dims(sc.model, sc.plan), true)) == 0);
  sc.plan.moe_pad_to_capacity = false;
  sc.plan.moe_capacity_factor = 0;
  sc.plan.moe_dispatcher = MoeDispatcher::kFlex;
  sc.plan.moe_flex_backend = MoeFlexBackend::kHybridEp;
  CHECK(sc.plan.moe_dispatch_syncs());
  sc.plan.moe_expert_rank_capacity_factor = 1.5;  // HybridEP's static budget
  CHECK_FALSE(sc.plan.moe_dispatch_syncs());
  sc.plan.moe_flex_backend = MoeFlexBackend::kDeepEp;  // DeepEP waits on its counter anyway
  CHECK(sc.plan.moe_dispatch_syncs());
}

TEST_CASE("host launch: every op of a layer belongs to a part CUDA graphs can capture",
          "[host_launch]") {
  const Scenario sc = tiny_moe();
  const LayerDims d = make_layer_dims(sc.model, sc.plan);
  for (bool moe : {false, true}) {
    for (const std::vector<Op>& ops : {layer_forward_ops(d, moe), layer_backward_ops(d, moe)}) {
      for (const Op& op : ops) {
        INFO(op.name);
        CHECK(op.graph_module != 0);
        if (!moe) CHECK((op.graph_module & (kGraphAttn | kGraphMlp)) != 0);
      }
    }
  }
  // The experts launch one GEMM per local expert.
  for (const Op& op : layer_forward_ops(d, true)) {
    if (op.name == "experts_fc1")
      CHECK(op.launches == sc.model.num_experts / sc.plan.expert_parallel);
    if (op.name == "router") CHECK(op.graph_module == kGraphMoeRouter);
    if (op.name == "permute") CHECK(op.graph_module == kGraphMoePreprocess);
  }
}

TEST_CASE("host launch: a host-bound MoE step is slower eager than under graphs", "[host_launch]") {
  Scenario sc = tiny_moe();
  sc.plan.stack.host_time_per_kernel_s = 50e-6;
  const Workload eager_w = build_workload(sc);
  const Pass& eager_fwd = eager_w.stages[0].chunks[0].forward;
  const double eager_s = eager_fwd.compute_s;
  // The waits are booked apart (docs/explain.md, host_wait), and the classes still sum up.
  CHECK(eager_fwd.classes[OpClass::kHostWait].seconds > 0);
  CHECK(eager_fwd.classes.seconds() == Approx(eager_s).epsilon(1e-12));
  sc.plan.cuda_graph_impl = CudaGraphImpl::kTransformerEngine;
  sc.plan.cuda_graph_scope = kGraphAttn | kGraphMoeRouter | kGraphMoePreprocess;
  const double partial_s = build_workload(sc).stages[0].chunks[0].forward.compute_s;
  sc.plan.cuda_graph_scope = kGraphFullIteration;
  const double full_s = build_workload(sc).stages[0].chunks[0].forward.compute_s;
  sc.plan.stack.host_time_per_kernel_s = 0;
  sc.plan.cuda_graph_impl = CudaGraphImpl::kNone;
  sc.plan.cuda_graph_scope = 0;
  const double gpu_s = build_workload(sc).stages[0].chunks[0].forward.compute_s;
  CHECK(eager_s > partial_s);
  CHECK(partial_s > full_s);
  CHECK(full_s == gpu_s);
}
