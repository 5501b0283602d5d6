#include "workload/cp_attention.h"

#include <algorithm>

#include "workload/local_attention.h"

namespace trident {
namespace {

constexpr double kFp32 = 4;  // bytes of the fp32 softmax statistics and of torch's fp32 merges

Op transfer(const char* name, double bytes, bool beside_next) {
  Op op;
  op.name = name;
  op.kind = OpKind::kCpTransfer;
  op.bytes = bytes;
  op.overlaps_next = beside_next;
  return op;
}

// A memory-bound kernel; `in_step`: it runs inside the ring step of the block before it.
Op memory(const char* name, double bytes, bool in_step) {
  Op op;
  op.name = name;
  op.kind = OpKind::kMemory;
  op.bytes = bytes;
  op.cp_ring = in_step;
  return op;
}

// Block i of the ring: i = 0 the local causal attention, else an unmasked block of s queries
// over s/2 keys (cp_block: ranks after the block's owner run s/2 queries over s keys).
Op ring_block(const LayerDims& d, bool backward, int i) {
  Op block = attention_op(backward ? "attention_cp_bwd" : "attention_cp", d, backward);
  block.cp_ring = true;
  if (i > 0) {
    block.attention.causal = false;
    block.attention.causal_part = true;
    block.attention.kv_s = d.s / 2;
    block.cp_block = true;
  }
  return block;
}

// Elements of the rank's attention output (and of Q, dQ), of its K (or V), and of its
// softmax statistics (one per query and head).
double out_elements(const LayerDims& d) { return d.b * d.s * d.q_dim / d.t; }
double kv_heads(const LayerDims& d) { return (d.cp_torch ? d.a : d.g) / d.t; }
double kv_elements(const LayerDims& d) { return d.b * d.s * kv_heads(d) * d.hd; }
double lse_elements(const LayerDims& d) { return d.b * d.s * d.a / d.t; }

// PyTorch's context_parallel (_templated_ring_attention and its backward). Forward: K/V of
// block i+1 arrive while block i runs, all at once beside block 0 under the all-gather
// rotation (_AllGatherRotater: one all_gather_tensor, waited at step 1); each block's output
// and LSE are cast to fp32 and merged element-wise (_SDPAMerger._merge_one: out - sigmoid(lse_b
// - lse) * (out - out_b), three fp32 passes of two reads and a write), the merged output cast
// back at the end. Backward: the same K/V rotation; dQ, dK, dV accumulated in fp32, the dK/dV
// of step i sent on in fp32 (dkv_rotater, always one hop: _AllToAllRotater) while block i+1
// runs, the last one waited for after the last block.
std::vector<Op> torch_ring_ops(const LayerDims& d, bool backward) {
  const double kv = cp_kv_bytes(d), e = d.elem;
  const double q = out_elements(d), k = kv_elements(d), lse = lse_elements(d);
  const double dkv = 2 * k * kFp32;
  const int cp = static_cast<int>(d.cp);
  const bool gather = d.cp_comm == CpCommType::kAllGather;
  std::vector<Op> ops;
  for (int i = 0; i < cp; ++i) {
    double bytes = gather ? (i == 0 ? (cp - 1) * kv : 0) : (i + 1 < cp ? kv : 0);
    if (backward && i > 0) bytes += dkv;
    if (bytes > 0) {
      ops.push_back(transfer(!backward ? "cp_kv"
                             : i == 0  ? "cp_kv_bwd"
                                       : "cp_kv_dkv",
                             bytes, true));
    }
    ops.push_back(ring_block(d, backward, i));
    if (!backward) {
      // Cast to fp32 (output and LSE), then for i > 0 the merge and the LSE update.
      const double cast = (e + kFp32) * (q + lse);
      ops.push_back(
          memory("cp_merge", i == 0 ? cast : cast + 3 * 3 * kFp32 * q + 6 * 3 * kFp32 * lse, true));
    } else {
      // grad += grad_ (fp32 += 16-bit) for dQ, dK, dV; dK/dV flattened (torch.cat) to send.
      ops.push_back(
          memory("cp_grad_accumulate", (2 * kFp32 + e) * (q + 2 * k) + 2 * kFp32 * 2 * k, true));
    }
  }
  if (backward) {
    ops.push_back(transfer("cp_dkv", dkv, false));
    // The fp32 accumulators zeroed before the ring and cast back after it.
    ops.push_back(memory("cp_grad_cast", (2 * kFp32 + e) * (q + 2 * k), false));
  } else {
    ops.push_back(memory("cp_merge_cast", (kFp32 + e) * q, false));
  }
  return ops;
}

// Transformer Engine's all_gather: K/V gathered (forward, and again backward), then the two
// local chunks, chunk r attending keys [0, (r+1) s/2) and chunk 2cp-1-r keys
// [0, (2cp-r) s/2), bottom-right causal: together the FLOPs of s queries over cp s / 2 keys
// unmasked. The backward accumulates each chunk's dK/dV into the gathered buffers and
// reduce-scatters them (16-bit, fwd_nominal_dtype).
std::vector<Op> all_gather_ops(const LayerDims& d, bool backward) {
  const double kv = cp_kv_bytes(d), e = d.elem, cp = d.cp;
  std::vector<Op> ops;
  ops.push_back(transfer("cp_kv_all_gather", (cp - 1) * kv, false));
  Op a = attention_op(backward ? "attention_bwd" : "attention", d, backward);
  a.attention.causal = false;
  a.attention.causal_part = true;
  a.attention.kv_s = cp * d.s / 2;
  // A local layer: each chunk attends only its window's (chunk's) keys of the gathered K/V
  // (get_seq_chunk_ids_for_reordering's window offsets); the busiest rank sets the time.
  a.attention.pairs = layer_local_pairs(d, LocalPart::kWorstCpRank);
  ops.push_back(a);
  if (!backward) {
    ops.push_back(memory("cp_out_copy", 2 * e * out_elements(d), false));
  } else {
    // dK, dV of (2cp + 1) s / 2 keys added into the gathered buffers (read, read, write).
    ops.push_back(memory("cp_dkv_accumulate", 3 * e * (2 * cp + 1) * kv_elements(d), false));
    ops.push_back(transfer("cp_dkv_reduce_scatter", (cp - 1) * kv, false));
  }
  return ops;
}

// Transformer Engine's a2a: Q, K, V exchanged so each rank holds the whole sequence for
// heads / cp (each rank keeps 1/cp of its data and sends the rest), chunks reordered for the
// load-balanced layout (a copy), one causal attention over cp × s tokens, the output back the
// same way; the backward mirrors it (dO in, dQ, dK, dV out).
std::vector<Op> a2a_ops(const LayerDims& d, bool backward) {
  const double e = d.elem, share = (d.cp - 1) / d.cp;
  const double q = out_elements(d), qkv = q + 2 * kv_elements(d);
  Op a = attention_op(backward ? "attention_bwd" : "attention", d, backward);
  a.attention.heads /= d.cp;
  a.attention.kv_heads /= d.cp;
  a.attention.s *= d.cp;
  // A local layer keeps its window's (chunks') pairs of the whole sequence.
  a.attention.pairs = layer_local_pairs(d, LocalPart::kWhole);
  std::vector<Op> ops;
  ops.push_back(transfer("cp_a2a_in", share * (backward ? q : qkv) * e, false));
  ops.push_back(memory("cp_a2a_reorder", 2 * e * (backward ? q : qkv), false));
  ops.push_back(a);
  ops.push_back(memory("cp_a2a_reorder", 2 * e * (backward ? qkv : q), false));
  ops.push_back(transfer("cp_a2a_out", share * (backward ? qkv : q) * e, false));
  return ops;
}

}  // namespace

double cp_kv_bytes(const LayerDims& d) { return 2 * kv_elements(d) * d.elem; }

std::vector<Op> ring_attention_ops(const LayerDims& d, bool backward) {
  const double kv = cp_kv_bytes(d), e = d.elem;
  const double q = out_elements(d), lse = lse_elements(d);
  const int cp = static_cast<int>(d.cp);
  std::vector<Op> ops;
  for (int i = 0; i < cp; ++i) {
    // Launched before block i: the K/V block i+1 needs, and (backward) block i-1's dK/dV.
    const double bytes = (i + 1 < cp ? kv : 0) + (backward && i > 0 ? kv : 0);
    if (bytes > 0) {
      ops.push_back(transfer(!backward ? "cp_kv"
                             : i == 0  ? "cp_kv_bwd"
                                       : "cp_kv_dkv",
                             bytes, true));
    }
    ops.push_back(ring_block(d, backward, i));
    if (!backward && i > 0) {
      // flash_attn_fwd_softmax_lse_correction of the step before, on the other stream.
      ops.push_back(memory("cp_lse_correction", 3 * kFp32 * lse, true));
    } else if (backward) {
      // dq.add_(dq_), dk/dv.add_(dk_/dv_) in the 16-bit buffers (fp32 only under FP8).
      ops.push_back(memory("cp_grad_correction", 3 * e * (q + 2 * kv_elements(d)), true));
    }
  }
  if (backward) {
    ops.push_back(transfer("cp_dkv", kv, false));
  } else {
    // flash_attn_fwd_out_correction(_init) after the ring, one kernel per step: the step's
    // output scaled by exp(lse_i - lse) and added into the output (the first one written).
    for (int i = 0; i < cp; ++i) {
      ops.push_back(memory("cp_out_correction", (i == 0 ? 2 : 3) * e * q + 2 * kFp32 * lse, false));
    }
  }
  return ops;
}

std::vector<Op> cp_attention_ops(const LayerDims& d, bool backward) {
  if (d.cp_torch) return torch_ring_ops(d, backward);
  switch (d.cp_comm) {
    case CpCommType::kAllGather:
      return all_gather_ops(d, backward);
    case CpCommType::kA2a:
      return a2a_ops(d, backward);
    case CpCommType::kP2p:
      break;
  }
  return ring_attention_ops(d, backward);
}

double cp_buffer_bytes(const LayerDims& d) {
  if (d.cp < 2) return 0;
  const double kv = cp_kv_bytes(d), e = d.elem, cp = d.cp;
  const double q = out_elements(d), k = kv_elements(d), lse = lse_elements(d);
  if (d.cp_torch) {
    // The gathered K/V (or two blocks in flight); forward the fp32 output and its merged
    // successor; backward fp32 dQ and dK/dV: the accumulator, the received and the sent copy.
    const double kv_buffers = d.cp_comm == CpCommType::kAllGather ? cp * kv : 2 * kv;
    return kv_buffers + std::max(2 * kFp32 * (q + lse), kFp32 * q + 3 * 2 * kFp32 * k);
  }
  switch (d.cp_comm) {
    case CpCommType::kAllGather:
      return 2 * cp * kv;  // backward: the gathered K/V and the whole-sequence dK/dV
    case CpCommType::kA2a:
      return 2 * e * (q + 2 * k);  // the exchange's send and receive buffers
    case CpCommType::kP2p:
      break;
  }
  // Forward: every step's K/V buffer (p2p_comm_buffers), output and LSE (out_per_step,
  // softmax_lse_per_step) live until the output correction after the ring; backward: two K/V
  // and two dK/dV blocks double-buffered, and the dQ buffer.
  return std::max(cp * (kv + e * q + kFp32 * lse), 4 * kv + e * q);
}

}  // namespace trident
