// The operations of one transformer layer (workload/layer_ops): GEMM FLOPs forward and
// backward, grouped-query attention and SwiGLU, and the layer's parameter count.
#include <catch2/catch.hpp>

#include "test_support.h"
#include "workload/layer_ops.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

TEST_CASE("backward GEMM FLOPs are exactly twice forward", "[workload]") {
  const LayerDims d =
      make_layer_dims(gpt_model(4, 1024, 16, 512, 1000), plan(2, 1, 1, 2, 1, ScheduleKind::k1F1B));
  CHECK(gemm_flops(layer_backward_ops(d)) == Approx(2 * gemm_flops(layer_forward_ops(d))));
  CHECK(gemm_flops(output_backward_ops(d)) == Approx(2 * gemm_flops(output_forward_ops(d))));
  // 24 b s h^2 + 2 b s^2 h per layer (Megatron-LM: the causal mask halves the scores), split
  // over t = 2.
  const double b = 2, s = 512, h = 1024;
  CHECK(gemm_flops(layer_forward_ops(d)) == Approx((24 * b * s * h * h + 2 * b * s * s * h) / 2));
}

TEST_CASE("grouped-query attention and SwiGLU change the GEMM FLOPs as they should", "[workload]") {
  // Llama 3 70B shapes: a = 64 heads, g = 8 KV groups, f = 28672, SwiGLU.
  ModelSpec m = gpt_model(80, 8192, 64, 8192, 128256);
  m.num_query_groups = 8;
  m.ffn_hidden_size = 28672;
  m.swiglu = true;
  m.rms_norm = true;  // RMSNorm: one weight vector per norm
  const LayerDims d = make_layer_dims(m, plan(8, 1, 1, 1, 1, ScheduleKind::k1F1B));
  const double b = 1, s = 8192, h = 8192, g = 8, a = 64, f = 28672, t = 8;
  const double qkv = 2 * b * s * h * (h + 2 * h * g / a);
  const double attention = 2 * b * s * s * h;  // causal: half of 4 b s^2 h
  const double proj = 2 * b * s * h * h;
  const double mlp = 3 * 2 * b * s * h * f;  // gate, up and down projections
  CHECK(gemm_flops(layer_forward_ops(d)) == Approx((qkv + attention + proj + mlp) / t));
  // Parameters: K/V projections shrink with the groups; three MLP matrices.
  CHECK(layer_params(m) == Approx(h * (h + 2 * h * g / a) + h * h + 3 * h * f + 2 * h));
}
