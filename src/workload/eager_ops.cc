#include "workload/eager_ops.h"

#include <algorithm>
#include <string>

namespace trident {
namespace {

// One eager kernel: `name` moving `bytes` through HBM.
Op kernel(const std::string& name, double bytes) {
  Op op;
  op.name = name;
  op.kind = OpKind::kMemory;
  op.bytes = bytes;
  return op;
}

// Appends one kernel per entry of `bytes_per_element` (bytes per element of an n-element
// tensor; 0 marks a per-row kernel of `rows` fp32 values read and written).
void add_kernels(std::vector<Op>* out, const std::string& name, double n, double rows,
                 std::initializer_list<double> bytes_per_element) {
  int i = 0;
  for (double b : bytes_per_element) {
    out->push_back(kernel(name + "." + std::to_string(i++), b > 0 ? b * n : 8 * rows));
  }
}

bool is_norm(const std::string& name) {
  return name == "ln1" || name == "ln2" || name == "final_ln";
}
bool is_norm_backward(const std::string& name) {
  return name == "ln1_bwd" || name == "ln2_bwd" || name == "final_ln_bwd";
}

}  // namespace

// Bytes per element at activation width e (16-bit: 2), fp32 intermediates 4.
std::vector<Op> eager_ops(const std::vector<Op>& ops, const LayerDims& d, bool rms_norm) {
  const double e = d.elem, tokens = d.b * d.s, bsh = tokens * d.h;
  const double local = d.sequence_parallel ? bsh / d.t : bsh;
  const double q = tokens * d.a * d.hd / d.t, k = tokens * d.g * d.hd / d.t;
  const double f = tokens * d.f / d.t, logits = tokens * d.v / d.t;
  const bool gqa = d.g < d.a && !d.mla;
  std::vector<Op> out;
  for (const Op& op : ops) {
    const std::string& n = op.name;
    if (op.kind != OpKind::kMemory && op.kind != OpKind::kAttention) {
      out.push_back(op);
    } else if (rms_norm && is_norm(n)) {
      // torchtitan/models/norms.py:96-101: x.float(), pow(2), mean(-1), + eps, rsqrt, x * r,
      // type_as(x), * weight.
      add_kernels(&out, n, local, local / d.h, {e + 4, 8, 4, 0, 0, 8, 4 + e, 2 * e});
    } else if (rms_norm && is_norm_backward(n)) {
      // Autograd of the same ops, last first: * weight (input and weight gradients, the
      // latter a product and a sum over rows), type_as, x * r (both gradients, one a sum),
      // rsqrt and + eps (per row), mean (expand), pow (2 x, times the gradient), the
      // accumulation of x's two gradients, float().
      add_kernels(&out, n, local, local / d.h,
                  {2 * e, 3 * e, e, e + 4, 8, 12, 4, 0, 0, 4, 8, 8, 12, 12, 4 + e});
    } else if (n == "rope" || n == "rope_bwd") {
      // apply_rotary_emb, torchtitan/models/llama/model.py:87-113: per tensor (Q, then K) a cast
      // to fp32, the complex product with freqs_cis and the cast back; its gradient likewise.
      add_kernels(&out, n + ".q", q, 0, {e + 4, 8, 4 + e});
      add_kernels(&out, n + ".k", k, 0, {e + 4, 8, 4 + e});
    } else if (n == "swiglu") {
      // FeedForward.forward, model.py:252-253: silu(w1(x)), then the product with w3(x).
      add_kernels(&out, n, f, 0, {2 * e, 3 * e});
    } else if (n == "swiglu_bwd") {
      // The product's two gradients, then silu_backward.
      add_kernels(&out, n, f, 0, {3 * e, 3 * e, 3 * e});
    } else if (n == "dropout_residual1" || n == "dropout_residual2") {
      // nn.Dropout (output and 1-byte mask), then the residual add.
      add_kernels(&out, n, local, 0, {2 * e + 1, 3 * e});
    } else if (n == "cross_entropy_max") {
      // train.py loss_fn: cross_entropy(pred.float()): the fp32 copy of the logits and
      // log_softmax over it (the max and sum of the fused kernel below are its parts).
      add_kernels(&out, n, logits, 0, {e + 4, 8});
    } else if (n == "cross_entropy_sum") {
      add_kernels(&out, n, tokens / d.t, 0, {4});  // nll_loss: one value per token
    } else if (n == "cross_entropy_bwd") {
      // nll_loss_backward (a dense fp32 gradient), log_softmax_backward, the cast back.
      add_kernels(&out, n, logits, 0, {4, 12, 4 + e});
    } else if (op.kind == OpKind::kAttention && !op.cp_ring && !op.backward) {
      // model.py:201-212: repeat_kv copies K and V to every query head (grouped-query
      // attention), scaled_dot_product_attention, then .contiguous() copies its output.
      if (gqa) add_kernels(&out, "repeat_kv", 1, 0, {e * (k + q), e * (k + q)});
      out.push_back(op);
      add_kernels(&out, "attn_out_contiguous", q, 0, {2 * e});
    } else if (op.kind == OpKind::kAttention && !op.cp_ring && op.backward) {
      // The output gradient made contiguous for the kernel; repeat_kv's gradients summed back
      // to the K/V heads.
      add_kernels(&out, "attn_grad_contiguous", q, 0, {2 * e});
      out.push_back(op);
      if (gqa) add_kernels(&out, "repeat_kv_bwd", 1, 0, {e * (k + q), e * (k + q)});
    } else {
      out.push_back(op);
    }
  }
  return out;
}

std::vector<Op> alternate_matmul_recompute(const std::vector<Op>& forward, const LayerDims& d) {
  const double tokens = d.b * d.s;
  std::vector<Op> out;
  for (const Op& op : forward) {
    if (op.kind == OpKind::kMemory) {
      out.push_back(op);
    } else if (op.kind == OpKind::kGemm && op.linear && op.name == "qkv") {
      Op wk = op;  // wk: the K columns of the fused projection
      wk.name = "wk";
      wk.gemm.n = d.hd * d.g / d.t;
      out.push_back(wk);
    } else if (op.kind == OpKind::kGemm && op.linear && op.name == "attn_proj") {
      out.push_back(op);  // wo
    } else if (op.kind == OpKind::kGemm && op.linear && op.name == "fc1" && d.swiglu) {
      Op w3 = op;  // w3: the up projection, half of the fused gate and up GEMM
      w3.name = "w3";
      w3.gemm = GemmShape{tokens, d.f / d.t, d.h, 1};
      out.push_back(w3);
    }
  }
  return out;
}

}  // namespace trident
