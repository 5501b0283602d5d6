// The collectives trident lowers onto the network.
#ifndef TRIDENT_CORE_COLLECTIVE_OP_H_
#define TRIDENT_CORE_COLLECTIVE_OP_H_

namespace trident {

enum class CollectiveOp { kAllReduce, kReduceScatter, kAllGather, kAllToAll };

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
