// The activation bytes a transformer layer keeps for its backward pass. Internal to the
// building of stage work (stage_work.cc); the public terms (layer_activation_bytes,
// dense_mlp_activation_bytes, alternate_matmul_activation_bytes) are in stage_work.h.
#ifndef TRIDENT_WORKLOAD_LAYER_ACTIVATIONS_H_
#define TRIDENT_WORKLOAD_LAYER_ACTIVATIONS_H_

#include "config/scenario.h"

namespace trident {

// Returns the bytes per element Transformer Engine saves of a linear layer's input for its
// weight gradient: the FP8 cast and its scales under fp8, the column-wise NVFP4 copy under fp4
// (kNvfp4BytesPerElement), else the 16-bit input.
double saved_linear_input_bytes(const PlanSpec& p);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_LAYER_ACTIVATIONS_H_
