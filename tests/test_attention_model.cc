// Attention backends, dropout, normalization and FP8 in the layer cost model
// (workload/layer_ops.h, workload/stage_work.h).
#include <algorithm>
#include <catch2/catch.hpp>

#include "config/scenario.h"
#include "core/errors.h"
#include "test_support.h"
#include "workload/layer_ops.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

bool has_op(const std::vector<Op>& ops, const std::string& name) {
  return std::any_of(ops.begin(), ops.end(), [&](const Op& o) { return o.name == name; });
}

double op_bytes(const std::vector<Op>& ops, const std::string& prefix) {
  double total = 0;
  for (const Op& o : ops) {
    if (o.kind == OpKind::kMemory && o.name.rfind(prefix, 0) == 0) total += o.bytes;
  }
  return total;
}

Scenario h100_llama(AttentionBackend backend) {
  Scenario sc = load_scenario(source_path("scenarios/llama3-70b-dgx-h100.yaml"), {});
  sc.plan.attention_backend = backend;
  return sc;
}

}  // namespace

TEST_CASE("auto picks what Megatron-Core with Transformer Engine picks", "[attention]") {
  CHECK(resolve_attention_backend(AttentionBackend::kAuto, GpuArchitecture::kHopper) ==
        AttentionBackend::kFused);
  CHECK(resolve_attention_backend(AttentionBackend::kAuto, GpuArchitecture::kBlackwell) ==
        AttentionBackend::kFused);
  CHECK(resolve_attention_backend(AttentionBackend::kAuto, GpuArchitecture::kAmpere) ==
        AttentionBackend::kFlash);
  CHECK(resolve_attention_backend(AttentionBackend::kAuto, GpuArchitecture::kUnspecified) ==
        AttentionBackend::kUnfused);
  CHECK(resolve_attention_backend(AttentionBackend::kUnfused, GpuArchitecture::kHopper) ==
        AttentionBackend::kUnfused);
}

TEST_CASE("flash and fused attention: one kernel per pass, no s x s tensor", "[attention]") {
  ModelSpec m = gpt_model(4, 8192, 64, 8192, 128256);
  PlanSpec p = plan(8, 1, 1, 1, 1, ScheduleKind::k1F1B);
  p.attention_backend = AttentionBackend::kFused;
  const LayerDims d = make_layer_dims(m, p, GpuArchitecture::kHopper);
  const std::vector<Op> fwd = layer_forward_ops(d), bwd = layer_backward_ops(d);
  CHECK(has_op(fwd, "attention"));
  CHECK(has_op(bwd, "attention_bwd"));
  for (const char* gone : {"attn_scores", "softmax", "attn_dropout", "attn_values"}) {
    CHECK(!has_op(fwd, gone));
  }
  for (const char* gone : {"softmax_bwd", "attn_dropout_bwd", "attn_scores_bwd_q"}) {
    CHECK(!has_op(bwd, gone));
  }
  // Model FLOPs keep Megatron-LM's formula (24 b s h^2 + 2 b s^2 h per layer forward, over t:
  // the causal mask halves the scores); the FLOPs that run follow the causal mask too, and the
  // backward recomputes the scores.
  const double b = 1, s = 8192, h = 8192, t = 8;
  CHECK(gemm_flops(fwd) == Approx((24 * b * s * h * h + 2 * b * s * s * h) / t));
  CHECK(gemm_flops(bwd) == Approx(2 * gemm_flops(fwd)));
  CHECK(executed_flops(fwd) == Approx((24 * b * s * h * h + 2 * b * s * s * h) / t));
  CHECK(executed_flops(bwd) == Approx((48 * b * s * h * h + 2.5 * 2 * b * s * s * h) / t));
}

TEST_CASE("activation memory: fused attention keeps no s x s scores", "[attention][memory]") {
  const ModelSpec m = gpt_model(4, 8192, 64, 8192, 128256);
  PlanSpec p = plan(8, 1, 1, 1, 1, ScheduleKind::k1F1B);
  const double sbh = 8192.0 * 8192, a = 64, s = 8192, h = 8192, t = 8;
  p.attention_backend = AttentionBackend::kUnfused;
  CHECK(layer_activation_bytes(m, p) == Approx(sbh * (10 + 24 / t + 5 * a * s / (h * t))));
  p.attention_backend = AttentionBackend::kFlash;
  CHECK(layer_activation_bytes(m, p) == Approx(sbh * (10 + 24 / t + 4 * a / (h * t))));
  // No dropout: no masks (2 of the 10) and, unfused, only the softmax output (2 a s / h).
  ModelSpec llama = m;
  llama.attention_dropout = 0;
  llama.hidden_dropout = 0;
  CHECK(layer_activation_bytes(llama, p) == Approx(sbh * (8 + 24 / t + 4 * a / (h * t))));
  p.attention_backend = AttentionBackend::kUnfused;
  CHECK(layer_activation_bytes(llama, p) == Approx(sbh * (8 + 24 / t + 2 * a * s / (h * t))));
  p.sequence_parallel = true;
  p.recompute = Recompute::kSelective;
  CHECK(layer_activation_bytes(llama, p) == Approx(32 * sbh / t));
  // Grouped-query attention: K and V (2 s b h each with MHA) shrink to g/a of that.
  llama.num_query_groups = 8;
  CHECK(layer_activation_bytes(llama, p) == Approx((32 - 4 * (1 - 8.0 / 64)) * sbh / t));
}

TEST_CASE("activation memory: FP8 keeps the linear layers' inputs in FP8", "[attention][memory]") {
  ModelSpec llama = gpt_model(4, 8192, 64, 8192, 128256);
  llama.attention_dropout = 0;
  llama.hidden_dropout = 0;
  PlanSpec p = plan(8, 1, 1, 1, 1, ScheduleKind::k1F1B);
  p.attention_backend = AttentionBackend::kFlash;
  p.sequence_parallel = true;
  p.recompute = Recompute::kSelective;
  const double sbh = 8192.0 * 8192, t = 8;
  CHECK(layer_activation_bytes(llama, p) == Approx(32 * sbh / t));
  // QKV and FC1 inputs 2 -> 1 byte each, FC2 input 8 -> 4, plus a 1-byte copy of the
  // projection's input: 32 - 2 - 4 + 1 = 27.
  p.precision = Precision::kFp8;
  p.fp8_recipe = Fp8Recipe::kDelayed;
  CHECK(layer_activation_bytes(llama, p) == Approx(27 * sbh / t));
  // MXFP8 adds an E8M0 scale per 32 elements to each of the four FP8 copies (1 + 1 + 4 + 1 =
  // 7 bytes of FP8 per s b h / t).
  p.fp8_recipe = Fp8Recipe::kMxfp8;
  CHECK(layer_activation_bytes(llama, p, GpuArchitecture::kBlackwell) ==
        Approx((27 + 7.0 / 32) * sbh / t));
  // Full recomputation keeps only the layer input, whatever the precision.
  p.recompute = Recompute::kFull;
  CHECK(layer_activation_bytes(llama, p) == Approx(2 * sbh / t));
}

TEST_CASE("dropout kernels exist only for dropout > 0, RMSNorm has no bias", "[attention]") {
  ModelSpec m = gpt_model(4, 4096, 32, 4096, 32000);
  PlanSpec p = plan(1, 1, 1, 1, 1, ScheduleKind::k1F1B);
  LayerDims d = make_layer_dims(m, p);
  CHECK(has_op(layer_forward_ops(d), "attn_dropout"));
  CHECK(has_op(layer_forward_ops(d), "dropout_residual1"));
  CHECK(has_op(embedding_forward_ops(d), "embedding_dropout"));
  m.attention_dropout = 0;
  m.hidden_dropout = 0;
  d = make_layer_dims(m, p);
  CHECK(!has_op(layer_forward_ops(d), "attn_dropout"));
  CHECK(!has_op(layer_forward_ops(d), "dropout_residual1"));
  CHECK(has_op(layer_forward_ops(d), "residual1"));
  CHECK(!has_op(layer_backward_ops(d), "dropout_residual1_bwd"));
  CHECK(!has_op(embedding_forward_ops(d), "embedding_dropout"));
  const double before = layer_params(m);
  m.rms_norm = true;
  CHECK(before - layer_params(m) == Approx(2 * 4096));
}

TEST_CASE(
    "Llama 3 70B on H100: fused attention is faster than unfused and MFU keeps "
    "Megatron's formula",
    "[attention]") {
  const Workload fused = build_workload(h100_llama(AttentionBackend::kFused));
  const Workload unfused = build_workload(h100_llama(AttentionBackend::kUnfused));
  CHECK(fused.model_flops_per_step == Approx(unfused.model_flops_per_step));
  // HFU counts FLOPs as MFU does (the attention backend changes their time, not their count).
  CHECK(fused.hardware_flops_per_step == Approx(unfused.hardware_flops_per_step));
  const ChunkWork& f = fused.stages[1].chunks[0];
  const ChunkWork& u = unfused.stages[1].chunks[0];
  CHECK(f.forward.compute_s < u.forward.compute_s);
  CHECK(f.backward.compute_s < u.backward.compute_s);
  // The shipped model files: Llama without dropout and with RMSNorm.
  const Scenario sc = h100_llama(AttentionBackend::kAuto);
  CHECK(sc.model.attention_dropout == 0);
  CHECK(sc.model.hidden_dropout == 0);
  CHECK(sc.model.rms_norm);
}

TEST_CASE("fp8: linear GEMMs at the FP8 curve, casts and FP8 weight copies", "[fp8]") {
  Scenario bf16 = h100_llama(AttentionBackend::kAuto);
  Scenario fp8 = bf16;
  fp8.plan.precision = Precision::kFp8;
  const Workload wb = build_workload(bf16), w8 = build_workload(fp8);
  const ChunkWork& b = wb.stages[1].chunks[0];
  const ChunkWork& e = w8.stages[1].chunks[0];
  CHECK(e.forward.compute_s < b.forward.compute_s);
  CHECK(e.forward.compute_s > 0.5 * b.forward.compute_s);  // attention and casts stay
  CHECK(w8.model_flops_per_step == Approx(wb.model_flops_per_step));
  // 16-bit weights plus FP8 copies (Hopper: the transpose too).
  CHECK(w8.stages[1].memory.weights == Approx(wb.stages[1].memory.weights * 2));
  CHECK(w8.stages[1].optimizer_s > wb.stages[1].optimizer_s);

  const LayerDims d = make_layer_dims(fp8.model, fp8.plan, GpuArchitecture::kHopper);
  const std::vector<Op> ops = layer_forward_ops(d);
  for (const char* cast : {"fp8_cast_qkv", "fp8_cast_proj", "fp8_cast_fc1", "fp8_cast_fc2"}) {
    CHECK(has_op(ops, cast));
  }
  CHECK(has_op(layer_backward_ops(d), "fp8_cast_fc2_grad"));
  // tensorwise (current scaling) reads its input once more for the amax.
  PlanSpec tw = fp8.plan;
  tw.fp8_recipe = Fp8Recipe::kTensorwise;
  const LayerDims dt = make_layer_dims(fp8.model, tw, GpuArchitecture::kHopper);
  CHECK(op_bytes(layer_forward_ops(dt), "fp8_cast") > op_bytes(ops, "fp8_cast"));

  // FP8 attention is faster than BF16 attention.
  Scenario fp8_attn = fp8;
  fp8_attn.plan.fp8_attention = true;
  CHECK(build_workload(fp8_attn).stages[1].chunks[0].forward.compute_s < e.forward.compute_s);
}

TEST_CASE("mxfp8 runs on Blackwell only, fp8_attention needs fp8", "[fp8]") {
  CHECK_THROWS_WITH(load_scenario(source_path("scenarios/llama3-70b-dgx-h100.yaml"),
                                  {"plan.precision=fp8", "plan.fp8_recipe=mxfp8"}),
                    Catch::Contains("mxfp8 needs a Blackwell GPU"));
  CHECK_THROWS_WITH(
      load_scenario(source_path("scenarios/llama3-70b-dgx-h100.yaml"), {"plan.fp8_attention=true"}),
      Catch::Contains("fp8_attention needs precision fp8"));
  const Scenario b200 = load_scenario(source_path("scenarios/llama3-70b-hgx-b200.yaml"),
                                      {"plan.precision=fp8", "plan.fp8_recipe=mxfp8"});
  CHECK(b200.plan.fp8_recipe == Fp8Recipe::kMxfp8);
  CHECK(build_workload(b200).stages[0].memory.weights > 0);
}
