// Where compute seconds go, by class of kernel (docs/explain.md): the seconds, FLOPs and HBM
// bytes the workload timed, per class, with what the same seconds could have done at the
// roofline (the dense peak of each kernel's precision, or the HBM bandwidth), so that the
// report divides the one by the other and never re-times a kernel. Which op is in which class:
// op_classes.h.
#ifndef TRIDENT_WORKLOAD_COMPUTE_CLASSES_H_
#define TRIDENT_WORKLOAD_COMPUTE_CLASSES_H_

#include <array>

namespace trident {

enum class OpClass {
  kGemm,            // GEMMs of the linear layers (QKV, projection, MLP, router, logits)
  kGroupedGemm,     // grouped GEMMs of the routed experts
  kAttention,       // fused attention kernels, or unfused attention's QK^T and (softmax) V GEMMs
  kMemory,          // memory-bound kernels of the passes: norms, activations, softmax, dropout,
                    // residual adds, FP8 casts, embedding, cross-entropy
  kOptimizer,       // the optimizer step (and, under fp8, the once-per-step weight cast)
  kKernelOverhead,  // the compute model's per-kernel overhead (launch and tail), all classes
  kHostWait,        // the GPU idle while the host launches (workload/host_launch.h)
};
constexpr int kOpClassCount = 7;

// Returns the class's stable name: "gemm", "grouped_gemm", "attention", "memory", "optimizer",
// "kernel_overhead", "host_wait".
const char* op_class_name(OpClass c);
// Returns true for the classes whose kernels are bound by the memory roofline (memory,
// optimizer); false for the tensor-core classes, the overhead and the host's waits.
bool memory_bound(OpClass c);

struct OpClassTotals {
  double kernels = 0;  // kernels timed (the overhead class: all kernels)
  double seconds = 0;  // their time, less the per-kernel overhead (booked to kKernelOverhead)
  double flops = 0;    // FLOPs the kernels run (tensor-core classes)
  double bytes = 0;    // HBM bytes the kernels move (memory-bound classes)
  // The roofline of `seconds`: sum of each kernel's seconds x its precision's dense peak
  // (FLOP), and x the HBM bandwidth (bytes). flops / peak_flops and bytes / peak_bytes are the
  // achieved fractions.
  double peak_flops = 0;
  double peak_bytes = 0;
};

// Per-class totals of a pass, or of a stage's step.
struct ComputeClasses {
  std::array<OpClassTotals, kOpClassCount> totals{};

  OpClassTotals& operator[](OpClass c) { return totals[static_cast<int>(c)]; }
  const OpClassTotals& operator[](OpClass c) const { return totals[static_cast<int>(c)]; }
  // Returns the sum of every class's seconds (the overhead included).
  double seconds() const;
  // Adds `times` x `other`, class by class.
  void add(const ComputeClasses& other, double times);
};

// Books one kernel of class `c` that the compute model timed at `seconds`, of which
// `overhead_s` (at most `seconds`) is its per-kernel overhead, booked to kKernelOverhead; the
// rest goes to `c` with `flops` against `peak_flops` FLOP/s (tensor-core classes) or `bytes`
// against `hbm_bytes_per_s` (memory-bound classes). A kernel timed at 0 books nothing.
void book_kernel(OpClass c, double flops, double bytes, double seconds, double overhead_s,
                 double peak_flops, double hbm_bytes_per_s, ComputeClasses* classes);
// Books `seconds` the GPU waited for the host before a kernel to kHostWait.
void book_host_wait(double seconds, ComputeClasses* classes);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_COMPUTE_CLASSES_H_
