#include "workload/compute_model.h"

#include <algorithm>

namespace trident {

ComputeModel::ComputeModel(const GpuSpec& gpu, Precision precision)
    : eff_(gpu.efficiency),
      peak_(gpu.peak_flops.at(precision)),
      hbm_(gpu.memory_bandwidth),
      element_bytes_(precision_bytes(precision)) {}

double ComputeModel::gemm_efficiency(double flops) const {
  return eff_.gemm * flops / (flops + eff_.gemm_half_flops);
}

double ComputeModel::gemm_time(const GemmShape& shape) const {
  const double flops = shape.flops();
  if (flops <= 0) return 0;
  const double compute = flops / (peak_ * gemm_efficiency(flops));
  const double stream = memory_time(shape.bytes(element_bytes_)) - eff_.kernel_overhead_s;
  return std::max(compute, stream) + eff_.kernel_overhead_s;
}

double ComputeModel::memory_time(double bytes) const {
  return bytes / (hbm_ * eff_.memory) + eff_.kernel_overhead_s;
}

}  // namespace trident
