// NVFP4 training (workload/nvfp4.h, precision fp4): the linear layers' inputs and output
// gradients quantized by three kernels of exact bytes, the activations they keep, the NVFP4
// weight copies of the FP4 layers only, the layers first_last_layers_bf16 keeps in BF16, and the
// GPUs it runs on.
#include <catch2/catch.hpp>
#include <string>

#include "config/scenario.h"
#include "core/errors.h"
#include "test_support.h"
#include "workload/layer_ops.h"
#include "workload/nvfp4.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

Scenario b200(const std::vector<std::string>& sets) {
  return load_scenario(source_path("scenarios/llama3-70b-hgx-b200.yaml"), sets);
}

const Op* find(const std::vector<Op>& ops, const std::string& name) {
  for (const Op& op : ops) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("nvfp4: each linear input is quantized by amax, row-wise and Hadamard column-wise casts",
          "[workload][nvfp4]") {
  const Scenario sc = b200({"plan.precision=fp4"});
  const LayerDims d = make_layer_dims(sc.model, sc.plan, sc.cluster.gpu.architecture);
  CHECK(d.fp4);
  CHECK(d.elem == 2);  // activations stay 16-bit
  const double bsh = d.b * d.s * d.h;
  const std::vector<Op> fwd = layer_forward_ops(d);
  REQUIRE(find(fwd, "nvfp4_amax_qkv") != nullptr);
  CHECK(find(fwd, "nvfp4_amax_qkv")->bytes == bsh * 2);
  CHECK(find(fwd, "nvfp4_cast_qkv")->bytes == bsh * (2 + 0.5 + 1.0 / 16));
  CHECK(find(fwd, "nvfp4_rht_cast_qkv")->bytes == bsh * (2 + 0.5 + 1.0 / 16));
  CHECK(find(fwd, "fp8_cast_qkv") == nullptr);
  // The output gradients too (stochastic rounding changes no bytes).
  const std::vector<Op> bwd = layer_backward_ops(d);
  CHECK(find(bwd, "nvfp4_rht_cast_fc2_grad")->bytes == bsh * (2 + 0.5 + 1.0 / 16));
  // Four linear layers, each input forward and output gradient backward: 3 kernels each.
  int quantize = 0;
  for (const Op& op : fwd) quantize += op.name.rfind("nvfp4_", 0) == 0 ? 1 : 0;
  for (const Op& op : bwd) quantize += op.name.rfind("nvfp4_", 0) == 0 ? 1 : 0;
  CHECK(quantize == 2 * 4 * 3);
}

TEST_CASE("nvfp4: the linear layers keep their inputs in NVFP4, the rest in 16 bits",
          "[workload][nvfp4][memory]") {
  const Scenario bf16 = b200({});
  const Scenario fp4 = b200({"plan.precision=fp4"});
  const GpuArchitecture arch = bf16.cluster.gpu.architecture;
  const double sbh = 8192.0 * 8192, t = 2, q = kNvfp4BytesPerElement;
  const double f = double(bf16.model.ffn_hidden_size) / bf16.model.hidden_size;
  // QKV and FC1 inputs (2 B each) and FC2's (f / h s b h elements at 2 B) go to q an element,
  // and the projection's input adds a copy of q: sequence parallel, all over t.
  CHECK(layer_activation_bytes(bf16.model, bf16.plan, arch) -
            layer_activation_bytes(fp4.model, fp4.plan, arch) ==
        Approx(sbh / t * (2 * (2 - q) + f * (2 - q) - q)).epsilon(1e-12));
}

TEST_CASE("nvfp4: NVFP4 weight copies of the FP4 layers, none for BF16 first and last layers",
          "[workload][nvfp4][memory]") {
  const Workload bf16 = build_workload(b200({}));
  const Workload fp4 = build_workload(b200({"plan.precision=fp4"}));
  // Stage 1 holds 20 transformer layers and nothing else.
  const double params = bf16.stages[1].params_per_gpu;
  CHECK(fp4.stages[1].memory.weights - bf16.stages[1].memory.weights ==
        Approx(params * 2 * (0.5 + 1.0 / 16)).epsilon(1e-12));
  CHECK(fp4.stages[1].memory.optimizer == bf16.stages[1].memory.optimizer);
  CHECK(fp4.stages[1].memory.gradients == bf16.stages[1].memory.gradients);

  const Scenario sc = b200({"plan.precision=fp4", "plan.first_last_layers_bf16=true",
                            "plan.num_layers_at_start_in_bf16=2"});
  const Workload mixed = build_workload(sc);
  const double layer = layer_params(sc.model) / 2;
  // Stage 0: layers 0 and 1 in BF16, 18 in FP4; stage 3: its last layer in BF16.
  CHECK(mixed.stages[0].memory.weights - bf16.stages[0].memory.weights ==
        Approx(18 * layer * nvfp4_weight_bytes_per_param()).epsilon(1e-12));
  CHECK(mixed.stages[3].memory.weights - bf16.stages[3].memory.weights ==
        Approx(19 * layer * nvfp4_weight_bytes_per_param()).epsilon(1e-12));
  CHECK(mixed.stages[1].memory.weights == fp4.stages[1].memory.weights);
  // The BF16 layers run BF16 GEMMs: stage 0's forward is slower than all-FP4's.
  CHECK(mixed.stages[0].chunks[0].forward.compute_s > fp4.stages[0].chunks[0].forward.compute_s);
  CHECK(mixed.stages[1].chunks[0].forward.compute_s == fp4.stages[1].chunks[0].forward.compute_s);
}

TEST_CASE("nvfp4: FP4 GEMMs beat MXFP8's despite the extra quantization passes",
          "[workload][nvfp4]") {
  const Workload bf16 = build_workload(b200({}));
  const Workload mxfp8 = build_workload(b200({"plan.precision=fp8", "plan.fp8_recipe=mxfp8"}));
  const Workload fp4 = build_workload(b200({"plan.precision=fp4"}));
  const auto pass = [](const Workload& w) {
    return w.stages[1].chunks[0].forward.compute_s + w.stages[1].chunks[0].backward.compute_s;
  };
  CHECK(pass(fp4) < pass(mxfp8));
  CHECK(pass(mxfp8) < pass(bf16));
  // The same FLOPs run whatever the precision.
  CHECK(fp4.model_flops_per_step == bf16.model_flops_per_step);
}

TEST_CASE("nvfp4: precision fp4 needs a Blackwell GPU with an fp4 peak", "[config][nvfp4]") {
  CHECK_THROWS_WITH(
      load_scenario(source_path("scenarios/llama3-70b-dgx-h100.yaml"), {"plan.precision=fp4"}),
      Catch::Contains("has no peak_flops for fp4"));
  CHECK_THROWS_WITH(b200({"plan.precision=fp4", "cluster.gpu.architecture=hopper"}),
                    Catch::Contains("precision fp4 (NVFP4 training) needs a Blackwell GPU"));
  CHECK_THROWS_WITH(b200({"plan.first_last_layers_bf16=true"}),
                    Catch::Contains("first_last_layers_bf16 needs precision fp8 or fp4"));
}
