// Software-stack profiles (config/stack.h, workload/eager_ops.h): loading and validation of
// the shipped profiles, and what a stack changes in the simulated work.
#include <catch2/catch.hpp>

#include "config/stack.h"
#include "config_support.h"
#include "test_support.h"
#include "workload/eager_ops.h"
#include "workload/layer_ops.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

StackSpec load_stack_file(const std::string& path) {
  Diagnostics diag;
  const CheckedConfigFile file = check_config_file(path, {}, &diag);
  REQUIRE(diag.empty());
  REQUIRE(file.kind == ConfigFileKind::kStack);
  return file.specs.plan.stack;
}

// Llama 3 8B on 8 H100 (scenarios/llama3-8b-dgx-h100.yaml) under `stack`.
Scenario llama8b(const std::string& stack, std::vector<std::string> more = {}) {
  more.insert(more.begin(), "plan.stack=" + stack);
  return load_scenario(repo("scenarios/llama3-8b-dgx-h100.yaml"), more);
}

double memory_bytes(const std::vector<Op>& ops) {
  double total = 0;
  for (const Op& op : ops) total += op.kind == OpKind::kMemory ? op.bytes : 0;
  return total;
}

int memory_kernels(const std::vector<Op>& ops) {
  int n = 0;
  for (const Op& op : ops) n += op.kind == OpKind::kMemory ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("stack: megatron-core's profile is the settings table's defaults", "[stack]") {
  const StackSpec file = load_stack_file(repo("configs/stacks/megatron-core.yaml"));
  const StackSpec defaults;
  CHECK(file.name == defaults.name);
  CHECK(file.elementwise == defaults.elementwise);
  CHECK(file.attention == defaults.attention);
  CHECK(file.host_time_per_kernel_s == defaults.host_time_per_kernel_s);
  CHECK(file.tp_grad_overlap == defaults.tp_grad_overlap);
  CHECK(file.selective_recompute == defaults.selective_recompute);
  CHECK(file.context_parallel == defaults.context_parallel);
  // Naming it changes nothing: the same workload as a plan without `stack`.
  const Workload named = build_workload(llama8b("megatron-core"));
  const Workload plain =
      build_workload(load_scenario(repo("scenarios/llama3-8b-dgx-h100.yaml"), {}));
  CHECK(named.stages[0].chunks[0].forward.compute_s == plain.stages[0].chunks[0].forward.compute_s);
  CHECK(named.stages[0].chunks[0].backward.compute_s ==
        plain.stages[0].chunks[0].backward.compute_s);
}

TEST_CASE("stack: the torchtitan profiles load by name", "[stack]") {
  const StackSpec eager = llama8b("torchtitan").plan.stack;
  CHECK(eager.name == "torchtitan");
  CHECK(eager.elementwise == ElementwiseKernels::kEager);
  CHECK(eager.attention == StackAttention::kSdpa);
  CHECK(eager.host_time_per_kernel_s == Approx(8e-6));
  CHECK_FALSE(eager.tp_grad_overlap);
  CHECK(eager.selective_recompute == SelectiveRecompute::kAlternateMatmuls);
  const Scenario compiled = llama8b("torchtitan-compile");
  CHECK(compiled.plan.stack.elementwise == ElementwiseKernels::kFused);
  // attention_backend auto is the stack's pick: SDPA's FlashAttention-2.
  CHECK(compiled.plan.attention_backend == AttentionBackend::kFlash2);
  CHECK(llama8b("torchtitan", {"plan.attention_backend=fused"}).plan.attention_backend ==
        AttentionBackend::kFused);
}

TEST_CASE("stack: a plan runs its stack's context-parallel attention unless it names one",
          "[stack]") {
  CHECK(llama8b("megatron-core").plan.cp_implementation == CpImplementation::kTransformerEngine);
  CHECK(llama8b("torchtitan").plan.cp_implementation == CpImplementation::kTorch);
  CHECK(llama8b("torchtitan-compile").plan.cp_implementation == CpImplementation::kTorch);
  CHECK(
      llama8b("torchtitan", {"plan.cp_implementation=transformer_engine"}).plan.cp_implementation ==
      CpImplementation::kTransformerEngine);
  CHECK(llama8b("megatron-core", {"plan.cp_implementation=torch"}).plan.cp_implementation ==
        CpImplementation::kTorch);
  // The default is the stack's whatever the order of the keys: --set stack after the plan's.
  CHECK(load_scenario(repo("scenarios/llama3-8b-dgx-h100.yaml"),
                      {"plan.context_parallel=2", "plan.data_parallel=2", "plan.stack=torchtitan"})
            .plan.cp_implementation == CpImplementation::kTorch);
}

TEST_CASE("stack: a bad profile is refused at its file, line and key", "[stack]") {
  const std::string stack = write_temp("stacks/bad.yaml",
                                       "name: bad\n"
                                       "elementwise: jit\n");
  const std::string message =
      load_error(repo("scenarios/llama3-8b-dgx-h100.yaml"), {"plan.stack=" + stack});
  CHECK_THAT(message, Catch::Contains("bad.yaml:2:14: plan.stack.elementwise"));
  CHECK_THAT(message, Catch::Contains("expected one of: fused, eager"));
  const std::string unknown = write_temp("stacks/typo.yaml",
                                         "name: typo\n"
                                         "host_time_per_kernal: 8 us\n");
  CHECK_THAT(load_error(repo("scenarios/llama3-8b-dgx-h100.yaml"), {"plan.stack=" + unknown}),
             Catch::Contains("typo.yaml:2:1: plan.stack.host_time_per_kernal"));
  const std::string bare = write_temp("stacks/unit.yaml",
                                      "name: unit\n"
                                      "host_time_per_kernel: 8\n");
  CHECK_THAT(load_error(repo("scenarios/llama3-8b-dgx-h100.yaml"), {"plan.stack=" + bare}),
             Catch::Contains("unit.yaml:2:23: plan.stack.host_time_per_kernel"));
  CHECK_THAT(load_error(repo("scenarios/llama3-8b-dgx-h100.yaml"), {"plan.stack=torchtitanx"}),
             Catch::Contains("did you mean"));
}

TEST_CASE("stack: eager RMSNorm runs eight kernels moving 9 times the fused bytes", "[stack]") {
  ModelSpec m = gpt_model(2, 4096, 32, 8192, 128256);
  m.rms_norm = true;
  m.swiglu = true;
  m.ffn_hidden_size = 14336;
  m.num_query_groups = 8;
  m.rotary_position_embeddings = true;
  m.attention_dropout = m.hidden_dropout = 0;
  PlanSpec p = plan(1, 1, 1, 1, 1, ScheduleKind::k1F1B);
  p.attention_backend = AttentionBackend::kFlash2;
  const LayerDims d = make_layer_dims(m, p);
  const std::vector<Op> fused = layer_forward_ops(d);
  const std::vector<Op> eager = eager_ops(fused, d, true);
  const double n = d.b * d.s * d.h;  // elements one norm reads
  std::vector<Op> ln1;
  for (const Op& op : eager) {
    if (op.name.rfind("ln1.", 0) == 0) ln1.push_back(op);
  }
  CHECK(ln1.size() == 8);
  // fp32 upcast, pow, mean, mul, downcast, weight: (2+4) + 8 + 4 + 8 + (4+2) + 4 bytes per
  // element, plus two per-row kernels, against TE's read and write of 2 bytes each.
  CHECK(memory_bytes(ln1) == 36 * n + 2 * 8 * (n / d.h));
  CHECK(memory_kernels(eager) > memory_kernels(fused));
  CHECK(memory_bytes(eager) > memory_bytes(fused));
  // The GEMMs and the attention kernel are the same.
  CHECK(executed_flops(eager) == executed_flops(fused));
}

TEST_CASE("stack: torchtitan's selective recompute reruns wk, wo and w3", "[stack]") {
  ModelSpec m = gpt_model(2, 4096, 32, 8192, 128256);
  m.swiglu = true;
  m.ffn_hidden_size = 14336;
  m.num_query_groups = 8;
  const LayerDims d =
      make_layer_dims(m, plan(2, 1, 1, 1, 1, ScheduleKind::k1F1B), GpuArchitecture::kHopper);
  const std::vector<Op> recompute = alternate_matmul_recompute(layer_forward_ops(d), d);
  const double tokens = 8192, h = 4096, t = 2;
  const double wk = 2 * tokens * h * (128 * 8) / t, wo = 2 * tokens * h * h / t,
               w3 = 2 * tokens * h * 14336 / t;
  CHECK(executed_flops(recompute) == wk + wo + w3);
}

TEST_CASE("stack: torchtitan runs more memory-bound bytes and exposes TP backward collectives",
          "[stack]") {
  const Workload te = build_workload(llama8b("megatron-core"));
  const Workload tt = build_workload(llama8b("torchtitan"));
  const ChunkWork& a = te.stages[0].chunks[0];
  const ChunkWork& b = tt.stages[0].chunks[0];
  CHECK(b.forward.classes[OpClass::kMemory].bytes > a.forward.classes[OpClass::kMemory].bytes);
  CHECK(b.forward.classes[OpClass::kMemory].kernels > a.forward.classes[OpClass::kMemory].kernels);
  CHECK(b.forward.compute_s > a.forward.compute_s);
  // t = 2: Megatron hides each input-gradient collective behind a weight-gradient GEMM.
  double te_overlap = 0, tt_overlap = 0;
  for (const Segment& s : a.backward.segments) te_overlap += s.overlap_s;
  for (const Segment& s : b.backward.segments) tt_overlap += s.overlap_s;
  CHECK(te_overlap > 0);
  CHECK(tt_overlap == 0);
  // The same model FLOPs: MFU counts the model, not the stack.
  CHECK(tt.model_flops_per_step == Approx(te.model_flops_per_step));
}

TEST_CASE("stack: --set changes one field of a named profile", "[stack]") {
  const Scenario s = llama8b("torchtitan", {"plan.stack.host_time_per_kernel=0 us"});
  CHECK(s.plan.stack.name == "torchtitan");
  CHECK(s.plan.stack.elementwise == ElementwiseKernels::kEager);
  CHECK(s.plan.stack.host_time_per_kernel_s == 0);
}

TEST_CASE(
    "stack: torchtitan's op-level recompute keeps the input, every other matmul's output "
    "and the attention's",
    "[stack][memory]") {
  const Scenario sc = load_scenario(repo("scenarios/llama3-8b-torchtitan-h100.yaml"), {});
  const Scenario megatron =
      load_scenario(repo("scenarios/llama3-8b-torchtitan-h100.yaml"), {"plan.stack=megatron-core"});
  // Llama 3 8B: h 4096, f 14336 (3.5 h), 8 of 32 heads for K and V; micro-batch 2 at 8192.
  const double sbh = 2.0 * 8192 * 4096;
  // input 2 + wq 2 + wv 2 x 8/32 + attention 2 + w1 2 x 3.5 + w2 2, no tensor parallelism.
  const double expected = sbh * (2 + 2 + 0.5 + 2 + 7 + 2);
  const GpuArchitecture arch = sc.cluster.gpu.architecture;
  CHECK(layer_activation_bytes(sc.model, sc.plan, arch) == Approx(expected).epsilon(1e-12));
  CHECK(alternate_matmul_activation_bytes(sc.model, sc.plan) == Approx(expected).epsilon(1e-12));
  // Megatron's selective recompute keeps every activation but the attention core's.
  CHECK(layer_activation_bytes(megatron.model, megatron.plan, arch) > 2 * expected);
}
