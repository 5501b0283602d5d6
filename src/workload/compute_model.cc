#include "workload/compute_model.h"

#include <algorithm>
#include <cmath>

#include "core/errors.h"

namespace trident {

ComputeModel::ComputeModel(const GpuSpec& gpu, Precision precision)
    : gpu_(gpu),
      eff_(gpu.efficiency),
      precision_(precision),
      peak_(gpu.peak_flops.at(precision)),
      hbm_(gpu.memory_bandwidth),
      element_bytes_(precision_bytes(precision)) {}

namespace {
constexpr double kTile = 128;  // output tile edge of the GEMM kernels; query tile of attention

bool low_precision(Precision p) { return p == Precision::kFp8 || p == Precision::kFp4; }
}  // namespace

double ComputeModel::peak(Precision p) const {
  auto it = gpu_.peak_flops.find(p);
  if (it == gpu_.peak_flops.end()) {
    throw SimulationError("GPU " + gpu_.name + " has no peak_flops for " + precision_name(p));
  }
  return it->second;
}

PrecisionEfficiency ComputeModel::precision_efficiency(Precision p) const {
  auto it = eff_.by_precision.find(p);
  if (it != eff_.by_precision.end()) return it->second;
  return PrecisionEfficiency{eff_.gemm, eff_.gemm_half_flops, eff_.fused, eff_.flash,
                             eff_.in_training};
}

double ComputeModel::waves(double tiles) const {
  if (eff_.sm_count <= 0 || tiles <= 0) return 1;
  const double w = std::ceil(tiles / eff_.sm_count);
  return tiles / (w * eff_.sm_count);
}

double ComputeModel::wave_efficiency(const GemmShape& shape) const {
  return waves(std::ceil(shape.m / kTile) * std::ceil(shape.n / kTile) * shape.batch);
}

double ComputeModel::gemm_efficiency(const GemmShape& shape, Precision p) const {
  const PrecisionEfficiency pe = precision_efficiency(p);
  const double flops = shape.flops();
  return pe.gemm * wave_efficiency(shape) * flops / (flops + pe.gemm_half_flops);
}

double ComputeModel::gemm_time(const GemmShape& shape, Precision p) const {
  const double flops = shape.flops();
  if (flops <= 0) return 0;
  const double compute = flops / (peak(p) * gemm_efficiency(shape, p));
  // FP8 / FP4 GEMMs read 8- or 4-bit operands and write 16-bit outputs.
  const double elem = precision_bytes(p);
  const double bytes = shape.bytes(elem, low_precision(p) ? 2.0 : elem);
  const double stream = bytes / (hbm_ * eff_.memory);
  return std::max(compute, stream) + eff_.kernel_overhead_s;
}

double ComputeModel::grouped_gemm_time(const GemmShape& shape, Precision p) const {
  const double flops = shape.flops();
  if (flops <= 0) return 0;
  const PrecisionEfficiency pe = precision_efficiency(p);
  const double one = flops / shape.batch;
  const double efficiency = pe.gemm * wave_efficiency(shape) * one / (one + pe.gemm_half_flops);
  const double elem = precision_bytes(p);
  const double bytes = shape.bytes(elem, low_precision(p) ? 2.0 : elem);
  const double stream = bytes / (hbm_ * eff_.memory);
  return std::max(flops / (peak(p) * efficiency), stream) + eff_.kernel_overhead_s;
}

double ComputeModel::attention_efficiency(const AttentionShape& a, AttentionBackend backend,
                                          Precision p, bool backward) const {
  const PrecisionEfficiency pe = precision_efficiency(p);
  // FlashAttention-2 has no FP8 kernel: its 16-bit parameters at any precision, else flash's.
  const AttentionEfficiency& e = backend == AttentionBackend::kFlash2
                                     ? (eff_.has_flash2 ? eff_.flash2 : pe.flash)
                                 : backend == AttentionBackend::kFlash ? pe.flash
                                                                       : pe.fused;
  // A local mask (pairs > 0) runs as a causal kernel over its span: each query tile's key loop
  // and its masked diagonal tiles are those of that length (compute_model.h).
  const double d = a.head_dim, s = a.pairs > 0 ? a.span() : a.s, keys = a.span();
  const double hd = (d / (d + e.half_head_dim)) / (128 / (128 + e.half_head_dim));
  const double ramp = keys / (keys + (backward ? e.backward_half_seq : e.half_seq));
  const double causal = a.causal || a.pairs > 0 ? s / (s + e.causal_seq) : 1.0;
  const double fill = waves(a.batch * a.heads * std::ceil(a.s / kTile));
  return (backward ? e.backward : e.forward) * hd * ramp * causal * fill;
}

double ComputeModel::attention_time(const AttentionShape& a, AttentionBackend backend, Precision p,
                                    bool backward) const {
  const double flops = a.flops(backward);
  if (flops <= 0) return 0;
  return flops / (peak(p) * attention_efficiency(a, backend, p, backward)) + eff_.kernel_overhead_s;
}

double ComputeModel::memory_time(double bytes) const {
  return bytes / (hbm_ * eff_.memory) + eff_.kernel_overhead_s;
}

}  // namespace trident
