#include "workload/compute_model.h"

#include <algorithm>
#include <cmath>

namespace trident {

ComputeModel::ComputeModel(const GpuSpec& gpu, Precision precision)
    : eff_(gpu.efficiency),
      peak_(gpu.peak_flops.at(precision)),
      hbm_(gpu.memory_bandwidth),
      element_bytes_(precision_bytes(precision)) {}

namespace {
constexpr double kTile = 128;  // output tile edge of the GEMM kernels
}  // namespace

double ComputeModel::wave_efficiency(const GemmShape& shape) const {
  if (eff_.sm_count <= 0) return 1;
  const double tiles = std::ceil(shape.m / kTile) * std::ceil(shape.n / kTile) * shape.batch;
  const double waves = std::ceil(tiles / eff_.sm_count);
  return tiles / (waves * eff_.sm_count);
}

double ComputeModel::gemm_efficiency(const GemmShape& shape) const {
  const double flops = shape.flops();
  return eff_.gemm * wave_efficiency(shape) * flops / (flops + eff_.gemm_half_flops);
}

double ComputeModel::gemm_time(const GemmShape& shape) const {
  const double flops = shape.flops();
  if (flops <= 0) return 0;
  const double compute = flops / (peak_ * gemm_efficiency(shape));
  const double stream = memory_time(shape.bytes(element_bytes_)) - eff_.kernel_overhead_s;
  return std::max(compute, stream) + eff_.kernel_overhead_s;
}

double ComputeModel::memory_time(double bytes) const {
  return bytes / (hbm_ * eff_.memory) + eff_.kernel_overhead_s;
}

}  // namespace trident
