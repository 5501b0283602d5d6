// The software stack a plan runs on (`plan.stack`, docs/stacks.md): a small profile file in the
// library's stacks/ folder (configs/stacks/megatron-core.yaml, torchtitan.yaml,
// torchtitan-compile.yaml) saying how that stack turns the same model and plan into kernels and
// collectives. The engine uses each field where it changes what is simulated (layer_ops.h,
// workload/layer_kernels.cc, pass_timing.cc, pass_segments.cc); none scales a result. Absent, a
// plan runs Megatron-Core with Transformer Engine, the defaults below, which
// configs/stacks/megatron-core.yaml states and sources.
#ifndef TRIDENT_CONFIG_STACK_H_
#define TRIDENT_CONFIG_STACK_H_

#include <string>

namespace trident {

class MapReader;

// How element-wise work (norms, rotary embeddings, the SwiGLU gate, residual adds) runs.
// kFused: one kernel per block, reading its inputs and writing its output once (Transformer
// Engine's fused kernels; torch.compile's Inductor fuses the same blocks). kEager: every PyTorch
// op of the model's code its own kernel and HBM pass (workload/eager_ops.h lists them).
enum class ElementwiseKernels { kFused, kEager };
// Which attention kernel `plan.attention_backend: auto` picks. kTransformerEngine: Megatron-Core's
// pick (cuDNN fused attention on Hopper and Blackwell, FlashAttention-2 on Ampere). kSdpa:
// PyTorch's scaled_dot_product_attention, whose flash backend is FlashAttention-2 on every GPU.
enum class StackAttention { kTransformerEngine, kSdpa };
// What `plan.recompute: selective` recomputes. kAttentionCore: Megatron's selective
// recomputation (Korthikanti et al. 2022: the attention core). kAlternateMatmuls: torchtitan's
// op-level policy, which saves every other matmul's output and the attention's, and recomputes
// the other matmuls and every element-wise op.
enum class SelectiveRecompute { kAttentionCore, kAlternateMatmuls };
// Whose context-parallel attention runs (plan.cp_implementation; the stack's is the default).
// kTransformerEngine: Megatron-Core's (AttnFuncWithCPAndKVP2P and its siblings); kTorch:
// PyTorch's context_parallel as torchtitan calls it (workload/cp_attention.h).
enum class CpImplementation { kTransformerEngine, kTorch };

const char* elementwise_kernels_name(ElementwiseKernels e);
const char* stack_attention_name(StackAttention a);
const char* selective_recompute_name(SelectiveRecompute s);

// Megatron-Core's host time per kernel launch: fitted on the published runs
// (scripts/fit_end_to_end.py, docs/calibration.md) and stated in configs/stacks/megatron-core.yaml.
constexpr double kMegatronCoreHostTimePerKernel = 63e-6;

struct StackSpec {
  std::string name = "megatron-core";
  std::string description;
  ElementwiseKernels elementwise = ElementwiseKernels::kFused;
  StackAttention attention = StackAttention::kTransformerEngine;
  // CPU time to dispatch one kernel: the GPU waits when the host falls behind (a queue, not a
  // floor per kernel: long GEMMs let the host run ahead). 0: never host-bound.
  double host_time_per_kernel_s = kMegatronCoreHostTimePerKernel;
  // The input-gradient TP collective runs beside the next weight-gradient GEMM (Megatron's
  // backward order); false: the weight gradient is computed with the input gradient, before
  // the collective, which is then exposed.
  bool tp_grad_overlap = true;
  SelectiveRecompute selective_recompute = SelectiveRecompute::kAttentionCore;
  // The context-parallel attention the stack calls: plan.cp_implementation unless the plan
  // names one.
  CpImplementation context_parallel = CpImplementation::kTransformerEngine;
};

// Converts a `plan.stack` map (a profile file's, or inline). Throws ConfigError located at the
// offending key (or records it in the map's diagnostics).
StackSpec read_stack(const MapReader& map);

}  // namespace trident

#endif  // TRIDENT_CONFIG_STACK_H_
