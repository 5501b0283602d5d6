#include "workload/tp_overlap.h"

#include <algorithm>

namespace trident {

int streaming_multiprocessors(GpuArchitecture arch) {
  switch (arch) {
    case GpuArchitecture::kAmpere:
      return 108;
    case GpuArchitecture::kHopper:
      return 132;
    case GpuArchitecture::kBlackwell:
      return 148;
    case GpuArchitecture::kUnspecified:
      break;
  }
  return 108;
}

double userbuffers_gemm_stretch(TpOverlap method, GpuArchitecture arch) {
  if (method != TpOverlap::kPipeline && method != TpOverlap::kBulk) return 1;
  const double sms = streaming_multiprocessors(arch);
  return sms / (sms - kUserbuffersSms);
}

OverlapSpan overlap_span(TpOverlap method, int t, int splits, double comm_s, double chunk_comm_s,
                         double gemm_s) {
  OverlapSpan out;
  switch (method) {
    case TpOverlap::kNone:
    case TpOverlap::kBulk:
      out.duration = std::max(comm_s, gemm_s);
      out.comm_end = comm_s;
      return out;
    case TpOverlap::kRingExchange: {
      const double g = gemm_s / t, step = comm_s / (t - 1);
      const double beat = std::max(g, step);
      out.duration = g + (t - 1) * beat;
      out.comm_end = (t - 2) * beat + step;
      return out;
    }
    case TpOverlap::kPipeline: {
      const double g = gemm_s / splits, beat = std::max(g, chunk_comm_s);
      out.duration = g + (splits - 1) * beat + chunk_comm_s;
      out.comm_offset = g;
      out.comm_end = out.duration;
      return out;
    }
  }
  return out;
}

}  // namespace trident
