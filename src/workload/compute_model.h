// Compute model: how long one kernel takes on a GPU.
//
// A GEMM of F FLOPs runs at  peak * gemm * waves * F / (F + gemm_half_flops): large GEMMs
// approach `gemm` of peak; `waves` is the fraction of SM slots its 128 x 128 output tiles fill
// (tiles / (ceil(tiles / sm_count) * sm_count)), so a GEMM with few tiles, or a last wave
// mostly empty, runs below it; the F / (F + half) term adds a fixed per-GEMM ramp. It never
// runs faster than its operands stream from HBM (roofline): max(compute, bytes / (hbm * memory)).
// Memory-bound kernels (layer norm, softmax, dropout, element-wise) move `bytes` through HBM at
// `memory` of its bandwidth. Every kernel also pays `kernel_overhead_s` (launch and tail).
// The parameters live in the cluster file's `gpu.efficiency` block, fitted once per GPU type
// (docs and fit: docs/calibration.md).
#ifndef TRIDENT_WORKLOAD_COMPUTE_MODEL_H_
#define TRIDENT_WORKLOAD_COMPUTE_MODEL_H_

#include "config/cluster.h"

namespace trident {

// One GEMM (or a batch of equal GEMMs): C[m,n] = A[m,k] * B[k,n], `batch` times.
struct GemmShape {
  double m = 0, n = 0, k = 0, batch = 1;
  double flops() const { return 2.0 * m * n * k * batch; }
  // Returns bytes read and written once each, at `elem` bytes per element.
  double bytes(double elem) const { return elem * batch * (m * k + k * n + m * n); }
};

class ComputeModel {
 public:
  // Requires gpu.peak_flops to hold `precision` (validated at load).
  ComputeModel(const GpuSpec& gpu, Precision precision);

  // Returns seconds for one GEMM kernel of the given shape.
  double gemm_time(const GemmShape& shape) const;
  // Returns seconds for a memory-bound kernel that moves `bytes` through HBM.
  double memory_time(double bytes) const;
  // Returns the efficiency (fraction of peak) the compute model gives a GEMM of this shape,
  // before the memory roofline.
  double gemm_efficiency(const GemmShape& shape) const;
  // Returns the fraction of SM slots the GEMM's output tiles fill (1 without sm_count).
  double wave_efficiency(const GemmShape& shape) const;

  double peak() const { return peak_; }
  double element_bytes() const { return element_bytes_; }

 private:
  ComputeEfficiency eff_;
  double peak_;
  double hbm_;
  double element_bytes_;
};

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_COMPUTE_MODEL_H_
