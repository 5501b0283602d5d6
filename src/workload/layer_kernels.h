// The kernels of one transformer layer as the plan's stack launches them, timed once, with the
// activations they keep. Internal to the building of stage work (stage_work.cc).
#ifndef TRIDENT_WORKLOAD_LAYER_KERNELS_H_
#define TRIDENT_WORKLOAD_LAYER_KERNELS_H_

#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "config/scenario.h"
#include "workload/compute_model.h"
#include "workload/layer_ops.h"
#include "workload/pass_timing.h"

namespace trident {

// Returns `ops` as the plan's software stack launches them: eager PyTorch splits the fused
// element-wise blocks (eager_ops.h).
std::vector<Op> stack_kernels(std::vector<Op> ops, const LayerDims& dims, const ModelSpec& model,
                              const PlanSpec& plan);

// The kernels of one transformer layer at one precision, timed once, with the activations
// they keep: the plan's, or BF16 for the layers first_last_layers_bf16 keeps there.
struct LayerKernels {
  // `layer` >= 0: the kernels of that layer's attention kind (local_attention.h); < 0: of a
  // layer with the whole causal prefix and the model's RoPE.
  LayerKernels(const ComputeModel& compute, const ModelSpec& model, const PlanSpec& plan,
               GpuArchitecture arch, const HostSpec& host, int layer = -1);
  LayerKernels(const LayerKernels&) = delete;
  LayerKernels& operator=(const LayerKernels&) = delete;

  LayerDims dims;
  PassTiming tm;
  std::vector<Op> fwd, bwd, recompute, moe_fwd, moe_bwd, moe_recompute;
  double act = 0, act_moe = 0;  // activation bytes kept per dense / MoE layer
};

// Returns `plan` with its linear layers in BF16 (FP16 on a GPU file without a BF16 peak):
// the layers first_last_layers_bf16 keeps out of FP8 / FP4.
PlanSpec bf16_plan(PlanSpec plan, const ComputeModel& compute);

// The kernels of every layer of a model: the plain layer's at the plan's precision, those of
// the layers first_last_layers_bf16 keeps in BF16, and those of each layer whose attention
// differs from the plain one (a sliding window, chunks, no RoPE: local_attention.h), built once
// per kind on first use. Requires `sc` and `compute` to outlive it.
class ModelKernels {
 public:
  ModelKernels(const Scenario& sc, const ComputeModel& compute);
  ModelKernels(const ModelKernels&) = delete;
  ModelKernels& operator=(const ModelKernels&) = delete;

  // Returns whether `layer` runs in BF16 under first_last_layers_bf16.
  bool is_bf16(int layer) const;
  // Returns the kernels of `layer`.
  const LayerKernels& of(int layer);
  // Returns whether `k` are a local attention kind's kernels (neither the plain layer's nor
  // the BF16 layers').
  bool is_local(const LayerKernels& k) const { return &k != &low && &k != bf16_.get(); }

  const LayerKernels low;  // the plain layer's, at the plan's precision

 private:
  const Scenario& sc_;
  const ComputeModel& compute_;
  std::unique_ptr<LayerKernels> bf16_;
  std::map<std::tuple<bool, double, double, bool>, std::unique_ptr<LayerKernels>> local_;
};

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_LAYER_KERNELS_H_
