#include "schedule/rank_map.h"

#include <set>
#include <utility>

namespace trident {

RankMap::RankMap(const PlanSpec& plan, const ClusterSpec& cluster)
    : t_(plan.tensor),
      d_(plan.data),
      p_(plan.pipeline),
      per_island_(plan.gpus_per_island > 0 ? plan.gpus_per_island : cluster.nvlink.island_size),
      island_size_(cluster.nvlink.island_size),
      gpus_per_node_(cluster.gpus_per_node),
      nics_per_node_(cluster.network.nics_per_node) {
  const int sizes[3] = {t_, d_, p_};
  int stride = 1;
  for (ParallelDim dim : plan.placement) {
    const int idx = static_cast<int>(dim);  // kTensor=0, kData=1, kPipeline=2
    stride_[idx] = stride;
    stride *= sizes[idx];
  }
}

int RankMap::gpu(int tp, int dp, int pp) const {
  return place(tp * stride_[0] + dp * stride_[1] + pp * stride_[2]);
}

int RankMap::place(int rank) const {
  if (per_island_ >= island_size_) return rank;
  return rank / per_island_ * island_size_ + rank % per_island_;
}

std::vector<int> RankMap::tensor_group(int dp, int pp) const {
  std::vector<int> g;
  for (int tp = 0; tp < t_; ++tp) g.push_back(gpu(tp, dp, pp));
  return g;
}

std::vector<int> RankMap::data_group(int tp, int pp) const {
  std::vector<int> g;
  for (int dp = 0; dp < d_; ++dp) g.push_back(gpu(tp, dp, pp));
  return g;
}

bool RankMap::tensor_groups_in_islands() const {
  for (int pp = 0; pp < p_; ++pp) {
    for (int dp = 0; dp < d_; ++dp) {
      const int isl = island_of(gpu(0, dp, pp));
      for (int tp = 1; tp < t_; ++tp) {
        if (island_of(gpu(tp, dp, pp)) != isl) return false;
      }
    }
  }
  return true;
}

bool RankMap::tensor_ranks_on_distinct_nics() const {
  for (int pp = 0; pp < p_; ++pp) {
    for (int dp = 0; dp < d_; ++dp) {
      std::set<std::pair<int, int>> nics;
      for (int tp = 0; tp < t_; ++tp) {
        const int g = gpu(tp, dp, pp);
        if (!nics.insert({g / gpus_per_node_, (g % gpus_per_node_) % nics_per_node_}).second) {
          return false;
        }
      }
    }
  }
  return true;
}

bool RankMap::data_groups_one_per_island() const {
  for (int pp = 0; pp < p_; ++pp) {
    for (int tp = 0; tp < t_; ++tp) {
      std::set<int> islands;
      for (int dp = 0; dp < d_; ++dp) {
        if (!islands.insert(island_of(gpu(tp, dp, pp))).second) return false;
      }
    }
  }
  return true;
}

bool RankMap::tensor_traffic_isolated() const {
  if (!tensor_groups_in_islands()) return false;
  for (int pp = 0; pp + 1 < p_; ++pp) {
    for (int dp = 0; dp < d_; ++dp) {
      for (int tp = 0; tp < t_; ++tp) {
        if (island_of(gpu(tp, dp, pp)) == island_of(gpu(tp, dp, pp + 1))) return false;
      }
    }
  }
  return true;
}

}  // namespace trident
