// Placement of ranks on GPUs: which GPU holds tensor rank `tp` of data-parallel replica `dp` in
// pipeline stage `pp`. Ranks are laid out in `plan.placement` order, fastest-varying first, and
// rank r runs on GPU r (GPUs numbered node by node).
#ifndef TRIDENT_SCHEDULE_RANK_MAP_H_
#define TRIDENT_SCHEDULE_RANK_MAP_H_

#include <vector>

#include "config/cluster.h"
#include "config/plan.h"

namespace trident {

class RankMap {
 public:
  // Requires a validated plan that fits the cluster.
  RankMap(const PlanSpec& plan, const ClusterSpec& cluster);

  // Returns the GPU index of (tp, dp, pp).
  int gpu(int tp, int dp, int pp) const;
  // Returns the GPUs of the cluster the ranks span: the highest GPU index used, plus one.
  int gpus_spanned() const { return place(t_ * d_ * p_ - 1) + 1; }
  int island_of(int gpu) const { return gpu / island_size_; }

  std::vector<int> tensor_group(int dp, int pp) const;
  std::vector<int> data_group(int tp, int pp) const;

  // True when every tensor-parallel group sits inside one NVLink island.
  bool tensor_groups_in_islands() const;
  // True when, besides, no pipeline transfer uses those GPUs' NVLink links (every pipeline
  // neighbour lives in another island), so TP all-reduces never meet other traffic and their
  // time is the closed-form ring time. Data-parallel traffic never overlaps a GPU's own TP
  // traffic (it starts after the GPU's last backward) and TP groups of other stages use
  // other GPUs' links.
  bool tensor_traffic_isolated() const;
  // True when the GPUs of every tensor-parallel group reach the network through pairwise
  // different NICs (GPU i of a node uses NIC i mod nics_per_node), so the TP ranks' pipeline
  // and data-parallel flows run on disjoint NIC and NVLink links.
  bool tensor_ranks_on_distinct_nics() const;
  // True when every data-parallel group has at most one member per NVLink island (its ring
  // runs entirely over the network, one NIC-to-NIC flow per edge).
  bool data_groups_one_per_island() const;

 private:
  // Returns the GPU of rank `rank` (ranks numbered in placement order): rank r itself, or
  // with plan.gpus_per_island = u, GPU r mod u of island r / u.
  int place(int rank) const;

  int t_, d_, p_;
  int per_island_;  // GPUs used per island (plan.gpus_per_island, or the whole island)
  int stride_[3];   // rank stride of tensor, data, pipeline
  int island_size_;
  int gpus_per_node_;
  int nics_per_node_;
};

}  // namespace trident

#endif  // TRIDENT_SCHEDULE_RANK_MAP_H_
