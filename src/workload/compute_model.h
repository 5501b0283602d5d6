// Compute model: how long one kernel takes on a GPU, per precision.
//
// GEMM. A GEMM of F FLOPs runs at  peak * gemm * waves * F / (F + gemm_half_flops): large GEMMs
// approach `gemm` of peak; `waves` is the fraction of SM slots its 128 x 128 output tiles fill
// (tiles / (ceil(tiles / sm_count) * sm_count)), so a GEMM with few tiles, or a last wave
// mostly empty, runs below it; the F / (F + half) term adds a fixed per-GEMM ramp. It never
// runs faster than its operands stream from HBM (roofline): max(compute, bytes / (hbm * memory)).
// `gemm` and `gemm_half_flops` are per precision (16-bit, fp8, fp4).
//
// Fused attention (FlashAttention, cuDNN): one kernel per pass. The forward runs
// 4 * b * s^2 * head_dim * heads FLOPs, halved under the causal mask (the masked tiles are
// skipped); the backward 2.5 x that (it recomputes the scores). It runs at
//   peak * eff * hd(d) * s / (s + half_seq) * (causal ? s / (s + causal_seq) : 1) * waves
// where hd(d) = [d / (d + half_head_dim)] / [128 / (128 + half_head_dim)] (1 at head dim 128),
// eff = forward or backward (the backward ramps with backward_half_seq), and waves the SM fill
// of b * heads * ceil(s / 128) query tiles. Parameters per backend and precision. A call of s
// queries over kv_s keys ramps with kv_s (each query tile's loop over the keys) and fills the
// SMs with its query tiles.
//
// Memory-bound kernels (norms, softmax, dropout, casts, element-wise) move `bytes` through HBM
// at `memory` of its bandwidth. Every kernel also pays `kernel_overhead_s` (launch and tail).
// The parameters live in the GPU file's `efficiency` block, fitted once per GPU and precision
// by scripts/fit_compute_model.py (docs/calibration.md). The times here are isolated kernels at
// the clock the peaks are quoted at; inside a step tensor-core kernels run at in_step() of that.
#ifndef TRIDENT_WORKLOAD_COMPUTE_MODEL_H_
#define TRIDENT_WORKLOAD_COMPUTE_MODEL_H_

#include "config/cluster.h"
#include "config/plan.h"

namespace trident {

// One GEMM (or a batch of equal GEMMs): C[m,n] = A[m,k] * B[k,n], `batch` times.
struct GemmShape {
  double m = 0, n = 0, k = 0, batch = 1;
  double flops() const { return 2.0 * m * n * k * batch; }
  // Returns bytes read and written once each: operands at `elem`, the output at `out_elem`.
  double bytes(double elem, double out_elem) const {
    return batch * (elem * (m * k + k * n) + out_elem * m * n);
  }
  double bytes(double elem) const { return bytes(elem, elem); }
};

// One fused-attention call on one GPU: `heads` query heads (and `kv_heads` key/value heads,
// which do not change the FLOPs) of `s` queries over `kv_s` keys (0: s) and head dimension
// `head_dim`, `batch` times. Context parallelism runs such calls as blocks of one causal
// attention: the diagonal block causal, the others unmasked (`causal_part`).
struct AttentionShape {
  double batch = 1, heads = 1, kv_heads = 1, s = 0, head_dim = 128;
  bool causal = true;
  double kv_s = 0;
  // An unmasked block of a causal attention (context parallelism off the diagonal).
  bool causal_part = false;
  // > 0: the query-key pairs per batch and head a local mask keeps (sliding window, chunks;
  // workload/local_attention.h): the kernel skips the key tiles outside the band, so its
  // FLOPs are these pairs', and it runs as a causal kernel over span() keys.
  double pairs = 0;
  double keys() const { return kv_s > 0 ? kv_s : s; }
  // The causal length whose kernel does the same work per query: 2 pairs / s (= s for the
  // plain causal s^2 / 2); a window of w keys runs as a causal attention over about 2w.
  double span() const { return pairs > 0 ? 2 * pairs / s : keys(); }
  // FLOPs the forward kernel runs (the causal mask skips half; a local mask all but `pairs`).
  double forward_flops() const {
    if (pairs > 0) return 4 * batch * pairs * head_dim * heads;
    return 4 * batch * s * keys() * head_dim * heads * (causal ? 0.5 : 1.0);
  }
  // FLOPs of the pass: the backward runs 2.5 x the forward (FlashAttention-2 paper, sec. 4.1).
  double flops(bool backward) const { return forward_flops() * (backward ? 2.5 : 1.0); }
  // Megatron-LM's model FLOPs of the pass (num_floating_point_operations: the s / h / 2 term,
  // "only half of the attention matrix is non-zero"): the causal mask halves 4 b s^2 d h
  // forward, the backward counts twice the forward. A block of a causal attention counts what
  // it runs (the diagonal block causal, the others whole), so the blocks of one attention sum
  // to the attention's count.
  double model_flops(bool backward) const { return forward_flops() * (backward ? 2.0 : 1.0); }
};

class ComputeModel {
 public:
  // `precision` is the default of gemm_time(shape) and element_bytes(). Requires
  // gpu.peak_flops to hold `precision` (validated at load); other precisions are looked up
  // when used.
  ComputeModel(const GpuSpec& gpu, Precision precision);

  // Returns seconds for one GEMM kernel of the given shape, at the model's / at `p`.
  double gemm_time(const GemmShape& shape) const { return gemm_time(shape, precision_); }
  double gemm_time(const GemmShape& shape, Precision p) const;
  // Returns the time of a grouped GEMM (Megatron-Core's GroupedMLP / TEGroupedMLP: one kernel
  // over `shape.batch` experts' GEMMs of m tokens each): the size ramp is that of one expert's
  // GEMM (2 m n k FLOPs), since each tile works inside one expert's matrices, while the waves
  // count the tiles of all experts together; one kernel overhead.
  double grouped_gemm_time(const GemmShape& shape, Precision p) const;
  // Returns seconds for one fused-attention kernel (backend flash or fused) at `p`.
  double attention_time(const AttentionShape& shape, AttentionBackend backend, Precision p,
                        bool backward) const;
  // Returns the fraction of `p`'s peak that attention_time gives the kernel (before overhead).
  double attention_efficiency(const AttentionShape& shape, AttentionBackend backend, Precision p,
                              bool backward) const;
  // Returns seconds for a memory-bound kernel that moves `bytes` through HBM.
  double memory_time(double bytes) const;
  // Returns the efficiency (fraction of peak) the compute model gives a GEMM of this shape,
  // before the memory roofline.
  double gemm_efficiency(const GemmShape& shape) const {
    return gemm_efficiency(shape, precision_);
  }
  double gemm_efficiency(const GemmShape& shape, Precision p) const;
  // Returns the fraction of SM slots the GEMM's output tiles fill (1 without sm_count).
  double wave_efficiency(const GemmShape& shape) const;

  double peak() const { return peak_; }
  // Returns `p`'s dense peak; throws SimulationError when the GPU has none.
  double peak(Precision p) const;
  bool has_peak(Precision p) const { return gpu_.peak_flops.count(p) > 0; }
  // Returns the fraction of these kernel times' throughput that tensor-core kernels at `p` reach
  // inside a training step (gpu.efficiency.in_training, or its precision block's); the times
  // above are isolated kernels.
  double in_training(Precision p) const { return precision_efficiency(p).in_training; }
  // Returns the fraction of the kernel times' throughput tensor-core kernels at `p` reach inside
  // a training step: in_training(p) x the sustained clock under the power limit / the clock
  // the peaks are quoted at (gpu.clocks; 1 without it).
  double in_step(Precision p) const { return in_training(p) * gpu_.clocks.sustained_ratio(); }
  double element_bytes() const { return element_bytes_; }
  // Returns the parameters the model uses at `p` (its block, else the 16-bit ones).
  PrecisionEfficiency precision_efficiency(Precision p) const;
  const GpuSpec& gpu() const { return gpu_; }

 private:
  double waves(double tiles) const;

  GpuSpec gpu_;
  ComputeEfficiency eff_;
  Precision precision_;
  double peak_;
  double hbm_;
  double element_bytes_;
};

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_COMPUTE_MODEL_H_
