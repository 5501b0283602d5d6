#include "workload/op_classes.h"

#include <algorithm>

namespace trident {

const char* op_class_name(OpClass c) {
  switch (c) {
    case OpClass::kGemm:
      return "gemm";
    case OpClass::kGroupedGemm:
      return "grouped_gemm";
    case OpClass::kAttention:
      return "attention";
    case OpClass::kMemory:
      return "memory";
    case OpClass::kOptimizer:
      return "optimizer";
    case OpClass::kKernelOverhead:
      return "kernel_overhead";
    case OpClass::kHostWait:
      return "host_wait";
  }
  return "memory";
}

bool memory_bound(OpClass c) { return c == OpClass::kMemory || c == OpClass::kOptimizer; }

double ComputeClasses::seconds() const {
  double s = 0;
  for (const OpClassTotals& t : totals) s += t.seconds;
  return s;
}

void ComputeClasses::add(const ComputeClasses& other, double times) {
  for (int i = 0; i < kOpClassCount; ++i) {
    OpClassTotals& a = totals[i];
    const OpClassTotals& b = other.totals[i];
    a.kernels += times * b.kernels;
    a.seconds += times * b.seconds;
    a.flops += times * b.flops;
    a.bytes += times * b.bytes;
    a.peak_flops += times * b.peak_flops;
    a.peak_bytes += times * b.peak_bytes;
  }
}

OpClass op_class(const Op& op) {
  switch (op.kind) {
    case OpKind::kGemm:
      if (op.grouped) return OpClass::kGroupedGemm;
      // Unfused attention's products (attn_scores, attn_values and their gradients).
      if (!op.linear && op.name.rfind("attn_", 0) == 0) return OpClass::kAttention;
      return OpClass::kGemm;
    case OpKind::kAttention:
      return OpClass::kAttention;
    default:
      return OpClass::kMemory;
  }
}

void book_kernel(OpClass c, double flops, double bytes, double seconds, double overhead_s,
                 double peak_flops, double hbm_bytes_per_s, ComputeClasses* classes) {
  if (seconds <= 0) return;
  const double overhead = std::min(overhead_s, seconds);
  OpClassTotals& t = (*classes)[c];
  t.kernels += 1;
  t.seconds += seconds - overhead;
  if (memory_bound(c)) {
    t.bytes += bytes;
    t.peak_bytes += (seconds - overhead) * hbm_bytes_per_s;
  } else {
    t.flops += flops;
    t.peak_flops += (seconds - overhead) * peak_flops;
  }
  (*classes)[OpClass::kKernelOverhead].kernels += 1;
  (*classes)[OpClass::kKernelOverhead].seconds += overhead;
}

void book_host_wait(double seconds, ComputeClasses* classes) {
  if (seconds > 0) (*classes)[OpClass::kHostWait].seconds += seconds;
}

void book_op(const Op& op, double seconds, double overhead_s, double peak_flops,
             double hbm_bytes_per_s, ComputeClasses* classes) {
  book_kernel(op_class(op), op.flops(), op.bytes, seconds, overhead_s, peak_flops, hbm_bytes_per_s,
              classes);
}

}  // namespace trident
