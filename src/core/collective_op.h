// The collectives trident lowers onto the network.
#ifndef TRIDENT_CORE_COLLECTIVE_OP_H_
#define TRIDENT_CORE_COLLECTIVE_OP_H_

namespace trident {

enum class CollectiveOp { kAllReduce, kReduceScatter, kAllGather, kAllToAll };

// How a tensor-parallel collective runs beside its GEMM under plan.tp_comm_overlap, after
// Transformer Engine's userbuffers methods (transformer_engine/pytorch/module/base.py,
// initialize_ub: ring_exchange for qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad; pipeline for
// proj_fprop, fc2_fprop; bulk for the dgrad reduce-scatters beside the wgrad GEMMs).
enum class TpOverlap {
  kNone,          // the collective alone, or (overlaps_next) beside the next kernel
  kRingExchange,  // all-gather feeding the GEMM: t-1 ring steps, each beside one of t chunks
  kPipeline,      // reduce-scatter draining the GEMM: split in chunks, each after its chunk
  kBulk,          // the whole collective beside an independent GEMM, on a few SMs
};

// Returns "all-reduce", "reduce-scatter", "all-gather" or "all-to-all".
inline const char* collective_op_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce:
      return "all-reduce";
    case CollectiveOp::kReduceScatter:
      return "reduce-scatter";
    case CollectiveOp::kAllGather:
      return "all-gather";
    case CollectiveOp::kAllToAll:
      return "all-to-all";
  }
  return "?";
}

}  // namespace trident

#endif  // TRIDENT_CORE_COLLECTIVE_OP_H_
