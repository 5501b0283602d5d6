// Placement of ranks on GPUs: which GPU holds tensor rank `tp` of context rank `cp` of
// data-parallel replica `dp` in pipeline stage `pp`. As Megatron-Core's RankGenerator
// (megatron/core/parallel_state.py, order "tp-cp-ep-dp-pp"), ranks are numbered over named
// dimensions in `plan.placement` order, fastest-varying first, and rank r runs on GPU r (GPUs
// numbered node by node). A group is the set of ranks that agree on every dimension but the
// ones it varies (tensor: the TP group; data and context: Megatron's data-parallel group with
// context parallelism).
#ifndef TRIDENT_LAYOUT_RANK_MAP_H_
#define TRIDENT_LAYOUT_RANK_MAP_H_

#include <array>
#include <optional>
#include <vector>

#include "config/cluster.h"
#include "config/plan.h"

namespace trident {

// A rank's index along each dimension.
struct RankCoord {
  int tp = 0, cp = 0, dp = 0, pp = 0;
};

class RankMap {
 public:
  // Requires a validated plan that fits the cluster.
  RankMap(const PlanSpec& plan, const ClusterSpec& cluster);

  // Returns the GPU index of `c`.
  int gpu(const RankCoord& c) const;
  // Returns the GPU of (tp, cp, dp, pp); the three-index form is context rank 0.
  int gpu(int tp, int cp, int dp, int pp) const { return gpu(RankCoord{tp, cp, dp, pp}); }
  int gpu(int tp, int dp, int pp) const { return gpu(RankCoord{tp, 0, dp, pp}); }
  // Returns the GPUs of the cluster the ranks span: the highest GPU index used, plus one.
  int gpus_spanned() const { return place(size_[0] * size_[1] * size_[2] * size_[3] - 1) + 1; }
  int island_of(int gpu) const { return gpu / island_size_; }
  // Returns the size of dimension `d`.
  int size(ParallelDim d) const { return size_[static_cast<int>(d)]; }

  // Returns the GPUs of the ranks that agree with `c` outside `vary`, in rank order.
  std::vector<int> group(const RankCoord& c, const std::vector<ParallelDim>& vary) const;
  // Returns every group that varies `vary` (each once, in order of their first rank).
  std::vector<std::vector<int>> groups(const std::vector<ParallelDim>& vary) const;

  std::vector<int> tensor_group(int cp, int dp, int pp) const;
  std::vector<int> tensor_group(int dp, int pp) const { return tensor_group(0, dp, pp); }
  // The context-parallel ring of (tp, dp, pp), in ring order (context rank 0 first).
  std::vector<int> context_group(int tp, int dp, int pp) const;
  // Megatron's data-parallel group with context parallelism (d * cp GPUs, in rank order):
  // the group that reduces gradients and shards the distributed optimizer.
  std::vector<int> data_group(int tp, int pp) const;

  // True when every tensor-parallel group sits inside one NVLink island.
  bool tensor_groups_in_islands() const;
  // True when, besides, no pipeline transfer uses those GPUs' NVLink links (every pipeline
  // neighbour lives in another island), so TP all-reduces never meet other traffic and their
  // time is the closed-form ring time. Data-parallel traffic never overlaps a GPU's own TP
  // traffic (it starts after the GPU's last backward) and TP groups of other stages use
  // other GPUs' links. Context-parallel transfers never overlap a TP collective of their
  // GPUs either: each ring step starts when every CP member has arrived, i.e. finished its
  // preceding collectives.
  bool tensor_traffic_isolated() const;
  // True when the GPUs of every tensor-parallel group reach the network through pairwise
  // different NICs (GPU i of a node uses NIC i mod nics_per_node), so the TP ranks' pipeline,
  // context and data-parallel flows run on disjoint NIC and NVLink links.
  bool tensor_ranks_on_distinct_nics() const;
  // True when every data-parallel group (with context parallelism) has at most one member
  // per NVLink island (its ring runs entirely over the network, one NIC-to-NIC flow per edge).
  bool data_groups_one_per_island() const;
  // Returns the fewest data-parallel replicas R (0 < R < d, R dividing d) whose GPUs, with
  // every context rank, hold all of their data-parallel groups' members in the islands they
  // touch, when every island holds the same number (two or more) of each group's members:
  // replicas 0..R-1 then stand for the others, island for island. Also requires every NIC to
  // serve replicas below R only or none. Returns 0 when no R does.
  int replicas_filling_islands() const;
  // True when every tensor-parallel group spans two or more islands and holds all the GPUs
  // the plan uses in each of them: those islands' NVLink links carry its traffic only.
  bool tensor_groups_fill_islands() const;

 private:
  static constexpr int kDims = 4;  // indexed by ParallelDim
  std::vector<ParallelDim> order_;
  std::array<int, kDims> size_{};
  std::array<int, kDims> stride_{};
  // Returns the GPU of rank `rank` (ranks numbered in placement order): rank r itself, or
  // with plan.gpus_per_island = u, GPU r mod u of island r / u.
  int place(int rank) const;
  // Returns the rank (placement order, before place()) of `c`, and the ranks of its group.
  int rank(const RankCoord& c) const;
  std::vector<int> rank_group(const RankCoord& c, const std::vector<ParallelDim>& vary) const;
  int per_island_;  // GPUs used per island (plan.gpus_per_island, or the whole island)
  // The predicates above walk every GPU: each is worked out once per map (the plan search
  // asks one map of 131,072 GPUs for its shortcuts many times, ScopeMemo).
  struct Memo {
    std::optional<bool> in_islands, distinct_nics, one_per_island, fill_islands, isolated;
    std::optional<int> replicas;
  };
  mutable Memo memo_;
  int island_size_;
  int gpus_per_node_;
  int nics_per_node_;
};

}  // namespace trident

#endif  // TRIDENT_LAYOUT_RANK_MAP_H_
