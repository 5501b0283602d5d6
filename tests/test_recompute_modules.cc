// Megatron-Core's selective recomputation by module (workload/recompute_modules): which forward
// ops rerun in backward, the activations each module frees, and both in a built workload.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config_support.h"
#include "workload/layer_ops.h"
#include "workload/moe_ops.h"
#include "workload/recompute_modules.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

// The tiny MoE (config_support.h) with a shared expert, selective recomputation, and `more`.
Scenario tiny_moe_selective(std::vector<std::string> more = {}) {
  more.insert(more.begin(),
              {"model.moe_shared_expert_intermediate_size=512", "plan.recompute=selective"});
  return tiny_moe(more);
}

std::vector<std::string> names(const std::vector<Op>& ops) {
  std::vector<std::string> out;
  for (const Op& op : ops) out.push_back(op.name);
  return out;
}

std::vector<std::string> rerun(const Scenario& sc, bool moe) {
  const LayerDims d = make_layer_dims(sc.model, sc.plan, GpuArchitecture::kHopper);
  return names(module_recompute_ops(layer_forward_ops(d, moe), sc.plan, moe));
}

double backward_compute(const StageWork& st) {
  double s = 0;
  for (const ChunkWork& ch : st.chunks) s += ch.backward.compute_s;
  return s;
}

}  // namespace

TEST_CASE("each recompute module reruns its own forward ops", "[recompute]") {
  using V = std::vector<std::string>;
  // Megatron's default, core_attn: the fused attention kernel only.
  CHECK(rerun(tiny_moe_selective(), true) == V{"attention"});
  CHECK(rerun(tiny_moe_selective(), false) == V{"attention"});
  CHECK(rerun(tiny_moe_selective({"plan.recompute_modules=[moe_act, layernorm]"}), true) ==
        V{"ln2", "experts_swiglu"});
  // A dense layer's norms are fused into its linear layers: nothing to rerun.
  CHECK(rerun(tiny_moe_selective({"plan.recompute_modules=[layernorm]"}), false).empty());
  CHECK(rerun(tiny_moe_selective({"plan.recompute_modules=[shared_experts]"}), true) ==
        V{"shared_fc1", "shared_act", "shared_fc2"});
  // The dense MLP from its norm to its TP reduce-scatter (sequence parallelism).
  CHECK(rerun(tiny_moe_selective({"plan.recompute_modules=[mlp]"}), false) ==
        V{"ln2", "tp_ag_mlp", "fc1", "swiglu", "fc2", "tp_rs_mlp"});
  // The whole MoE MLP: its TP all-gather, router, dispatch, experts, combine, shared expert.
  const V moe = rerun(tiny_moe_selective({"plan.recompute_modules=[moe]"}), true);
  REQUIRE(moe.size() >= 10);
  CHECK(moe.front() == "tp_ag_mlp");
  CHECK(moe.back() == "tp_rs_mlp");
  CHECK(std::count(moe.begin(), moe.end(), "ep_a2a_dispatch") == 1);
  CHECK(std::count(moe.begin(), moe.end(), "ep_a2a_combine") == 1);
  // Without selective granularity Megatron ignores the list.
  CHECK(rerun(tiny_moe_selective({"plan.recompute=none", "plan.recompute_modules=[moe]"}), true)
            .empty());
}

TEST_CASE("each recompute module frees its saved activations", "[recompute][memory]") {
  const Scenario base = tiny_moe_selective();
  CHECK(recompute_module_savings(base.model, base.plan, true) == 0);
  const Scenario mlp = tiny_moe_selective({"plan.recompute_modules=[mlp]"});
  CHECK(recompute_module_savings(mlp.model, mlp.plan, false) ==
        Approx(dense_mlp_activation_bytes(mlp.model, mlp.plan)));
  const Scenario moe = tiny_moe_selective({"plan.recompute_modules=[moe]"});
  CHECK(recompute_module_savings(moe.model, moe.plan, true) ==
        Approx(moe_activation_delta_bytes(moe.model, moe.plan) +
               dense_mlp_activation_bytes(moe.model, moe.plan)));
  // T = 1024 tokens, h = 1024, t = 2: the pre-MLP norm's 16-bit output on the SP share.
  const Scenario ln = tiny_moe_selective({"plan.recompute_modules=[layernorm]"});
  CHECK(recompute_module_savings(ln.model, ln.plan, true) == Approx(2.0 * 1024 * 1024 / 2));
  CHECK(recompute_module_savings(ln.model, ln.plan, false) == 0);
  // moe_act: the FC2 input, f_moe / ETP = 512 / 2 per routed copy, ETP T k L / t = 2 x 1024 x 2
  // / 2 copies (balanced), 16 bits.
  const Scenario act = tiny_moe_selective({"plan.recompute_modules=[moe_act]"});
  CHECK(recompute_module_savings(act.model, act.plan, true) ==
        Approx(2.0 / 2 * 1024 * 2 * (512 / 2) * 2));
  // shared_experts: its gated FC1 output and FC2 input, T (2 x 2 f_s + 2 f_s) / t.
  const Scenario shared = tiny_moe_selective({"plan.recompute_modules=[shared_experts]"});
  CHECK(recompute_module_savings(shared.model, shared.plan, true) ==
        Approx(1024.0 * (2 * 512 * 2 + 512 * 2) / 2));
}

TEST_CASE("recompute modules trade activation memory for backward time", "[recompute][memory]") {
  const Workload core = build_workload(tiny_moe_selective());
  const Workload act =
      build_workload(tiny_moe_selective({"plan.recompute_modules=[core_attn, moe_act]"}));
  const Workload none = build_workload(tiny_moe_selective({"plan.recompute_modules=[moe_act]"}));
  const StageWork& c = core.stages[0];
  const StageWork& a = act.stages[0];
  const StageWork& n = none.stages[0];
  CHECK(a.memory.activations < c.memory.activations);
  CHECK(backward_compute(a) > backward_compute(c));
  // Without core_attn the attention core is kept and not rerun: more memory, less backward.
  CHECK(n.memory.activations > a.memory.activations);
  CHECK(backward_compute(n) < backward_compute(a));
}

TEST_CASE("recompute module names and rules are Megatron-Core's", "[recompute][checks]") {
  const std::string tiny = repo("scenarios/tiny.yaml");
  const std::vector<std::string> moe = {"model.num_experts=8", "plan.sequence_parallel=true",
                                        "plan.recompute=selective"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> s = moe;
    s.insert(s.end(), more.begin(), more.end());
    return load_error(tiny, s);
  };
  CHECK_THAT(with({"plan.recompute_modules=[attention]"}),
             Catch::Contains("`attention` is not a module name (expected core_attn, moe_act"));
  CHECK_THAT(with({"plan.recompute_modules=[mhc]"}),
             Catch::Contains("`mhc` is a Megatron-Core module trident does not model"));
  CHECK_THAT(with({"plan.recompute_modules=[moe_act]", "plan.moe_grouped_gemm=false"}),
             Catch::Contains("recompute_modules moe_act needs moe_grouped_gemm true"));
  CHECK_THAT(with({"plan.recompute_modules=[mla_up_proj]"}),
             Catch::Contains("mla_up_proj needs multi_latent_attention true"));
  CHECK_THAT(
      with({"model.moe_shared_expert_intermediate_size=512", "plan.expert_model_parallel_size=2",
            "plan.moe_token_dispatcher_type=alltoall", "plan.moe_shared_expert_overlap=true",
            "plan.recompute_modules=[shared_experts]"}),
      Catch::Contains("shared_experts cannot work with moe_shared_expert_overlap"));
}
