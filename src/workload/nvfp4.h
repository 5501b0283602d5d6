// NVFP4 training (plan.precision fp4, fp4_recipe nvfp4) as Transformer Engine's
// NVFP4BlockScaling recipe runs it (transformer_engine/common/recipe/__init__.py, class
// NVFP4BlockScaling; NVIDIA, "Pretraining Large Language Models with NVFP4", arXiv 2509.25149):
//
//  - every linear layer's fprop, dgrad and wgrad GEMM reads NVFP4 operands: E2M1 values in
//    blocks of 16 along the GEMM's K dimension, each block with an E4M3 scale, and one FP32
//    scale per tensor from its absolute maximum (the block scales are relative to it);
//  - the scales run along K, so a tensor used on both sides of the GEMM (activations: fprop and
//    wgrad; gradients: dgrad and wgrad; weights: fprop and dgrad) is quantized twice from the
//    16-bit source, row-wise and column-wise;
//  - inputs and output gradients (fp4_quant_fwd_inp, fp4_quant_bwd_grad) get a 16x16 random
//    Hadamard transform before their column-wise (wgrad) quantization, gradients stochastic
//    rounding; weights (fp4_quant_fwd_weight) 16x16 2-D blocks, which serve both layouts;
//  - attention (fp8_dpa = False: "Not applying quantization to attention for now"), the
//    embedding, the output layer and the first / last layers of first_last_layers_bf16 stay
//    BF16, as do the primary weights, the gradients and the optimizer.
//
// Quantizing one 16-bit tensor for a linear layer is three memory-bound kernels (TE's
// NVFP4Quantizer with RHT: the amax of the tensor and of its Hadamard transform in one pass,
// the row-wise cast, then the fused Hadamard transform and column-wise cast). Pure; no SimGrid.
#ifndef TRIDENT_WORKLOAD_NVFP4_H_
#define TRIDENT_WORKLOAD_NVFP4_H_

namespace trident {

// Bytes per element of one NVFP4 layout: a 4-bit value and 1/16 of an E4M3 block scale. TE
// keeps the scales of 2-D weight blocks in the same 1x16 layout the GEMM reads (each 16x16
// block's scale once per row), so weights take it too. The per-tensor FP32 scale is 4 B a
// tensor, not counted.
constexpr double kNvfp4BytesPerElement = 0.5 + 1.0 / 16;

// HBM bytes per element of the three kernels that quantize a 16-bit activation or gradient for
// a linear layer: amax (read 2), row-wise cast (read 2, write one layout), Hadamard transform
// and column-wise cast (read 2, write one layout).
struct Nvfp4QuantizeBytes {
  double amax = 2;
  double rowwise = 2 + kNvfp4BytesPerElement;
  double columnwise = 2 + kNvfp4BytesPerElement;
  double total() const { return amax + rowwise + columnwise; }
};

// Bytes per parameter of the NVFP4 weight copies TE caches for a step (row-wise for fprop,
// column-wise for dgrad): 2 x kNvfp4BytesPerElement.
constexpr double nvfp4_weight_bytes_per_param() { return 2 * kNvfp4BytesPerElement; }

// HBM bytes per parameter of the weights' quantization, once a step (Megatron passes
// is_first_microbatch): amax (read 2), one 2-D cast reading the 16-bit weight and writing both
// layouts.
constexpr double nvfp4_weight_cast_bytes_per_param() {
  return 2 + 2 + nvfp4_weight_bytes_per_param();
}

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_NVFP4_H_
