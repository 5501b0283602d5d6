// Tensor-parallel communication overlapped with GEMMs (plan.tp_comm_overlap), as Transformer
// Engine's userbuffers run it under sequence parallelism: the all-gather before a GEMM and the
// reduce-scatter after it are split into chunks that run beside the GEMM's chunks, so only the
// first or last chunk, and the SMs the communication kernels take, stay exposed. Pure.
#ifndef TRIDENT_WORKLOAD_TP_OVERLAP_H_
#define TRIDENT_WORKLOAD_TP_OVERLAP_H_

#include "config/cluster.h"
#include "core/collective_op.h"

namespace trident {

// Reduce-scatter chunks of the pipeline method: Transformer Engine's num_splits default (4).
constexpr int kPipelineSplits = 4;
// SMs a userbuffers communication kernel holds (TE add_ub's num_sm default, 16) for the
// SM-driven methods (pipeline, bulk). Ring exchange moves data with the copy engines (TE's
// UbufP2PCommOverlap) and holds none.
constexpr int kUserbuffersSms = 16;

// Returns the streaming multiprocessors of a GPU of `arch`: A100 108, H100/H200 SXM 132,
// B200 148 (NVIDIA's architecture white papers); 108 when unspecified.
int streaming_multiprocessors(GpuArchitecture arch);

// Returns the factor by which a GEMM running beside a `method` communication kernel is
// slower on `arch`: all SMs over those the kernel leaves, sms / (sms - 16) for pipeline and
// bulk; 1 for ring exchange and kNone.
double userbuffers_gemm_stretch(TpOverlap method, GpuArchitecture arch);

// Where the collective of an overlapped segment sits and how long the overlapped part takes.
struct OverlapSpan {
  double duration = 0;     // from the end of the segment's compute to the end of the segment
  double comm_offset = 0;  // when the collective's first flow starts, from the same origin
  double comm_end = 0;     // when its last flow ends
};

// Returns the span of a collective of closed-form time `comm_s` (`chunk_comm_s`: one
// 1/`splits` chunk of it, pipeline only) beside `gemm_s` seconds of GEMM already stretched by
// userbuffers_gemm_stretch, on `t` ranks:
//   kNone, kBulk     max(comm, gemm)
//   kRingExchange    g + (t-1) max(g, comm/(t-1)),  g = gemm / t   (the local chunk runs at once)
//   kPipeline        g + (n-1) max(g, c) + c,  g = gemm / n, c = chunk_comm_s, n = splits
OverlapSpan overlap_span(TpOverlap method, int t, int splits, double comm_s, double chunk_comm_s,
                         double gemm_s);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_TP_OVERLAP_H_
