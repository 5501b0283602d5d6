// Experts with expert_tensor_parallel_size 1 and with context parallelism (workload/moe_ops,
// workload/stage_work): Megatron-Core's expert groups fold the tensor and context ranks, so an
// expert's GEMMs take the tokens of EP x ETP sequence-parallel shards at its whole width, its
// weights split over EP x ETP, its gradients reduce over t cp d / (EP ETP).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config_support.h"
#include "workload/moe_model.h"
#include "workload/moe_ops.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

// The tiny scenario (t=2 p=2 d=2 on 8 A100) as a SwiGLU MoE of 8 experts of 512, top-2, with
// the alltoall dispatcher and ETP = 1.
Scenario etp1_moe(std::vector<std::string> more = {}) {
  std::vector<std::string> sets = {"model.num_experts=8",
                                   "model.moe_router_topk=2",
                                   "model.moe_ffn_hidden_size=512",
                                   "model.swiglu=true",
                                   "model.ffn_hidden_size=2048",
                                   "plan.sequence_parallel=true",
                                   "plan.expert_model_parallel_size=4",
                                   "plan.expert_tensor_parallel_size=1",
                                   "plan.moe_token_dispatcher_type=alltoall"};
  sets.insert(sets.end(), more.begin(), more.end());
  return load_scenario(repo("scenarios/tiny.yaml"), sets);
}

const Op* find_op(const std::vector<Op>& ops, const std::string& name) {
  for (const Op& op : ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("ETP 1: unsplit experts take EP sequence-parallel shards of tokens", "[moe][etp]") {
  const Scenario sc = etp1_moe();
  const double T = 1024, h = 1024, e = 2, t = 2, k = 2, E = 8, ep = 4;
  // EP 4 x ETP 1 / t 2 x T k / E: each rank's experts see 4 shards of T / 2 tokens.
  CHECK(moe_tokens_per_expert(sc.model, sc.plan) == ep / t * T * k / E);
  const std::vector<Op> fwd = layer_forward_ops(make_layer_dims(sc.model, sc.plan), true);
  const Op* dispatch = find_op(fwd, "ep_a2a_dispatch");
  REQUIRE(dispatch != nullptr);
  CHECK(dispatch->bytes == T * k * h * e / t);      // the rank's sequence-parallel share
  CHECK(find_op(fwd, "tp_ag_experts") == nullptr);  // no expert TP group to gather over
  CHECK(find_op(fwd, "tp_rs_experts") == nullptr);
  const Op* fc1 = find_op(fwd, "experts_fc1");
  REQUIRE(fc1 != nullptr);
  CHECK(fc1->gemm.m == ep / t * T * k / E);
  CHECK(fc1->gemm.n == 2 * 512);  // fused gate and up projections, unsplit
  CHECK(fc1->gemm.batch == E / ep);
  // Same expert FLOPs per step as ETP = t (the work is only laid out differently).
  const Scenario etp2 =
      etp1_moe({"plan.expert_tensor_parallel_size=2", "plan.expert_model_parallel_size=2"});
  const std::vector<Op> fwd2 = layer_forward_ops(make_layer_dims(etp2.model, etp2.plan), true);
  double f1 = 0, f2 = 0;
  for (const Op& op : fwd) f1 += op.grouped ? op.flops() : 0;
  for (const Op& op : fwd2) f2 += op.grouped ? op.flops() : 0;
  CHECK(f1 == f2);
}

TEST_CASE("ETP 1: expert weights split over EP, gradients reduce over t d / EP", "[moe][etp]") {
  const Scenario sc = etp1_moe({"plan.expert_model_parallel_size=2"});
  const Workload w = build_workload(sc);
  const ModelSpec& m = sc.model;
  const double t = 2, h = 1024, T = 1024;
  const StageWork& mid = w.stages[0];
  // 4 layers; 8 / EP 2 = 4 whole experts each; the rest split over t.
  const double experts = 4 * routed_expert_params(m);
  const double dense = (attention_params(m) + router_params(m) + 4 * h) / t;
  const double embed = 32000 * h / t + 1024 * h;
  CHECK(mid.expert_params_per_gpu == Approx(4 * experts).epsilon(1e-12));
  CHECK(mid.params_per_gpu == Approx(4 * (dense + experts) + embed).epsilon(1e-12));
  CHECK(sc.plan.expert_data_parallel() == 2);  // t d / (EP ETP) = 4 / 2
  CHECK(mid.expert_grad_bytes == Approx(4 * experts * 4).epsilon(1e-12));
  // With the distributed optimizer the experts' Adam state shards over EDP = 2, the rest over
  // d = 2: 12 bytes per parameter.
  const Scenario zero1 =
      etp1_moe({"plan.expert_model_parallel_size=2", "plan.distributed_optimizer=true"});
  const StageWork& z = build_workload(zero1).stages[0];
  CHECK(z.memory.optimizer ==
        Approx(12 * (4 * dense + embed) / 2 + 12 * 4 * experts / 2).epsilon(1e-12));
  // EP 1, ETP 1: the experts stay whole on every TP rank and reduce over t d = 4 GPUs, apart
  // from the dense weights (d = 2).
  const Scenario ep1 = etp1_moe({"plan.expert_model_parallel_size=1"});
  CHECK(ep1.plan.expert_data_parallel() == 4);
  CHECK(build_workload(ep1).stages[0].expert_params_per_gpu ==
        Approx(4 * 8 * routed_expert_params(m)).epsilon(1e-12));
  // Activations: the experts' input is the rank's own copies (ETP T k L / t tokens) at whole
  // width: T k / t (h + 3 f), the probabilities 4 T k, less the dense MLP's (2g + 2) f / h of
  // T h / t.
  const double delta =
      T * 2 / t * (h + 3 * 512) * 2 + 4 * T * 2 - dense_mlp_activation_bytes(m, sc.plan);
  CHECK(moe_activation_delta_bytes(m, sc.plan) == Approx(delta).epsilon(1e-12));
  CHECK(mid.memory.dispatch_buffers == 2 * T * 2 * h / t * 2);
}

TEST_CASE("experts with context parallelism see the rank's sequence block", "[moe][cp]") {
  // t = 1, cp = 2, d = 2 on the tiny cluster: s / cp = 512 tokens per rank; EP 4 folds the
  // context and data ranks (EDP = cp d / EP = 1).
  const Scenario sc = etp1_moe(
      {"plan.tensor_parallel=1", "plan.context_parallel=2", "plan.sequence_parallel=false"});
  CHECK(sc.plan.expert_data_parallel() == 1);
  const double T = 1024 / 2.0, k = 2, E = 8, ep = 4, h = 1024;
  CHECK(moe_tokens_per_expert(sc.model, sc.plan) == ep * T * k / E);
  const std::vector<Op> fwd = layer_forward_ops(make_layer_dims(sc.model, sc.plan), true);
  CHECK(find_op(fwd, "ep_a2a_dispatch")->bytes == T * k * h * 2);
  CHECK(find_op(fwd, "experts_fc1")->gemm.m == ep * T * k / E);
  CHECK(build_workload(sc).stages[0].memory.dispatch_buffers == 2 * T * k * h * 2);
}
