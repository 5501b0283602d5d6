// The collectives trident lowers onto the network.
#ifndef TRIDENT_CORE_COLLECTIVE_OP_H_
#define TRIDENT_CORE_COLLECTIVE_OP_H_

namespace trident {

enum class CollectiveOp { kAllReduce, kReduceScatter, kAllGather };

// Returns "all-reduce", "reduce-scatter" or "all-gather".
inline const char* collective_op_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce:
      return "all-reduce";
    case CollectiveOp::kReduceScatter:
      return "reduce-scatter";
    case CollectiveOp::kAllGather:
      return "all-gather";
  }
  return "?";
}

}  // namespace trident

#endif  // TRIDENT_CORE_COLLECTIVE_OP_H_
