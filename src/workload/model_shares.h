// What every pipeline stage of a model shares when its work is built: each layer's parameters
// per GPU, the chunks' layers, the bytes per weight parameter and which parameter gathers run.
// Internal to the building of stage work (stage_work.cc).
#ifndef TRIDENT_WORKLOAD_MODEL_SHARES_H_
#define TRIDENT_WORKLOAD_MODEL_SHARES_H_

#include <vector>

#include "config/scenario.h"
#include "workload/layer_ops.h"

namespace trident {

struct ModelShares {
  // Tensor parallelism, the hidden size, and the data-parallel group with context parallelism
  // (d cp GPUs), which reduces the gradients and shards the distributed optimizer.
  double t = 1, h = 0, d = 1;
  int p = 1, v = 1;  // pipeline stages, virtual stages (chunks) per stage
  // Parameters per GPU: a MoE layer's routed experts, a MoE layer, a dense layer, the word
  // embedding (vocab / t), the learned position embedding and the final norm.
  double moe_expert_params = 0, moe_layer_params = 0, per_layer_params = 0;
  double vocab_params = 0, pos_params = 0, final_norm = 0;
  std::vector<int> layers;       // of each virtual stage
  std::vector<int> first_layer;  // of each virtual stage (and past the last)
  bool output_copy = false;      // the output layer holds its own matrix
  double apart_params = 0;       // a MoE layer's experts reduced over the expert-data group
  bool fp8 = false, fp4 = false;
  // Bytes per parameter: the FP8 copy and its per-step cast, the 16-bit weights (0 with FP8
  // primary weights) and what the distributed optimizer gathers.
  double fp8_weight_bytes = 0, fp8_weight_cast = 0, weight_bytes = 0, gather_bytes = 0;
  double tokens = 0;  // per rank and micro-batch: micro_batch_size seq / cp
  // Per-layer parameter gathers before each layer's forward and backward, of dense weights over
  // d cp and of routed experts over the expert-data-parallel group (edp GPUs).
  bool gather_bwd = false, gather_fwd = false;
  double edp = 1;
  bool gather_experts_bwd = false, gather_experts_fwd = false;
  // Multi-token prediction (mtp.h): the virtual stage of its depths and each depth's weights.
  int mtp_vs = -1;
  bool mtp_moe = false;
  double mtp_head_params = 0, mtp_depth = 0, mtp_apart = 0;
};

// Returns the shares of `sc`, with `dims` its plain layer's dimensions. Requires a validated
// scenario.
ModelShares model_shares(const Scenario& sc, const LayerDims& dims);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_MODEL_SHARES_H_
