// Which class of kernel (compute_classes.h) each op of a layer's op list is in, and its
// booking (docs/explain.md).
#ifndef TRIDENT_WORKLOAD_OP_CLASSES_H_
#define TRIDENT_WORKLOAD_OP_CLASSES_H_

#include "workload/compute_classes.h"
#include "workload/layer_ops.h"

namespace trident {

// Returns the class of a kGemm, kAttention or kMemory op (the others are not compute; they
// return kMemory and are never booked). Unfused attention's products are the 16-bit GEMMs
// named "attn_*" (attn_scores, attn_values and their gradients).
OpClass op_class(const Op& op);

// Books one kernel of `op` timed at `seconds` (op_time), of which `overhead_s` is its
// per-kernel overhead, to op_class(op) with its FLOPs or HBM bytes (compute_classes.h book_kernel).
void book_op(const Op& op, double seconds, double overhead_s, double peak_flops,
             double hbm_bytes_per_s, ComputeClasses* classes);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_OP_CLASSES_H_
