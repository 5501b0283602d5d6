#include "layout/rank_map.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace trident {
namespace {

int index(ParallelDim d) { return static_cast<int>(d); }

int coord_of(const RankCoord& c, ParallelDim d) {
  switch (d) {
    case ParallelDim::kTensor:
      return c.tp;
    case ParallelDim::kContext:
      return c.cp;
    case ParallelDim::kData:
      return c.dp;
    case ParallelDim::kPipeline:
      return c.pp;
  }
  return 0;
}

}  // namespace

RankMap::RankMap(const PlanSpec& plan, const ClusterSpec& cluster)
    : order_(full_placement(plan.placement)),
      per_island_(plan.gpus_per_island > 0 ? plan.gpus_per_island : cluster.nvlink.island_size),
      island_size_(cluster.nvlink.island_size),
      gpus_per_node_(cluster.gpus_per_node),
      nics_per_node_(cluster.network.nics_per_node) {
  size_[index(ParallelDim::kTensor)] = plan.tensor;
  size_[index(ParallelDim::kContext)] = plan.context;
  size_[index(ParallelDim::kData)] = plan.data;
  size_[index(ParallelDim::kPipeline)] = plan.pipeline;
  int stride = 1;
  for (ParallelDim dim : order_) {
    stride_[index(dim)] = stride;
    stride *= size_[index(dim)];
  }
}

int RankMap::rank(const RankCoord& c) const {
  int r = 0;
  for (ParallelDim d : order_) r += coord_of(c, d) * stride_[index(d)];
  return r;
}

int RankMap::gpu(const RankCoord& c) const { return place(rank(c)); }

int RankMap::place(int rank) const {
  if (per_island_ >= island_size_) return rank;
  return rank / per_island_ * island_size_ + rank % per_island_;
}

std::vector<int> RankMap::group(const RankCoord& c, const std::vector<ParallelDim>& vary) const {
  std::vector<int> gpus = rank_group(c, vary);
  for (int& g : gpus) g = place(g);
  return gpus;
}

std::vector<int> RankMap::rank_group(const RankCoord& c,
                                     const std::vector<ParallelDim>& vary) const {
  int base = rank(c);
  for (ParallelDim d : vary) base -= coord_of(c, d) * stride_[index(d)];
  std::vector<int> out{base};
  for (ParallelDim d : vary) {
    std::vector<int> next;
    for (int i = 0; i < size(d); ++i) {
      for (int g : out) next.push_back(g + i * stride_[index(d)]);
    }
    out = std::move(next);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::vector<int>> RankMap::groups(const std::vector<ParallelDim>& vary) const {
  std::vector<std::vector<int>> out;
  const int n = size(ParallelDim::kTensor) * size(ParallelDim::kContext) *
                size(ParallelDim::kData) * size(ParallelDim::kPipeline);
  for (int r = 0; r < n; ++r) {
    RankCoord c;
    int rest = r;
    for (ParallelDim d : order_) {
      const int v = rest % size(d);
      rest /= size(d);
      if (d == ParallelDim::kTensor) c.tp = v;
      if (d == ParallelDim::kContext) c.cp = v;
      if (d == ParallelDim::kData) c.dp = v;
      if (d == ParallelDim::kPipeline) c.pp = v;
    }
    // A group's first rank is the one at 0 along every varied dimension: each group once, in
    // order of its first rank.
    bool first = true;
    for (ParallelDim d : vary) first = first && coord_of(c, d) == 0;
    if (first) out.push_back(group(c, vary));
  }
  return out;
}

std::vector<int> RankMap::tensor_group(int cp, int dp, int pp) const {
  return group(RankCoord{0, cp, dp, pp}, {ParallelDim::kTensor});
}

std::vector<int> RankMap::context_group(int tp, int dp, int pp) const {
  std::vector<int> g;
  for (int cp = 0; cp < size(ParallelDim::kContext); ++cp) g.push_back(gpu(tp, cp, dp, pp));
  return g;
}

std::vector<int> RankMap::data_group(int tp, int pp) const {
  return group(RankCoord{tp, 0, 0, pp}, {ParallelDim::kData, ParallelDim::kContext});
}

bool RankMap::tensor_groups_in_islands() const {
  if (!memo_.in_islands) {
    memo_.in_islands = [&]() -> bool {
      for (const std::vector<int>& g : groups({ParallelDim::kTensor})) {
        for (int gpu : g) {
          if (island_of(gpu) != island_of(g.front())) return false;
        }
      }
      return true;
    }();
  }
  return *memo_.in_islands;
}

bool RankMap::tensor_ranks_on_distinct_nics() const {
  if (!memo_.distinct_nics) {
    memo_.distinct_nics = [&]() -> bool {
      for (const std::vector<int>& g : groups({ParallelDim::kTensor})) {
        std::set<std::pair<int, int>> nics;
        for (int gpu : g) {
          if (!nics.insert({gpu / gpus_per_node_, (gpu % gpus_per_node_) % nics_per_node_})
                   .second) {
            return false;
          }
        }
      }
      return true;
    }();
  }
  return *memo_.distinct_nics;
}

bool RankMap::data_groups_one_per_island() const {
  if (!memo_.one_per_island) {
    memo_.one_per_island = [&]() -> bool {
      for (const std::vector<int>& g : groups({ParallelDim::kData, ParallelDim::kContext})) {
        std::set<int> islands;
        for (int gpu : g) {
          if (!islands.insert(island_of(gpu)).second) return false;
        }
      }
      return true;
    }();
  }
  return *memo_.one_per_island;
}

int RankMap::replicas_filling_islands() const {
  if (!memo_.replicas) {
    memo_.replicas = [&]() -> int {
      const int t = size(ParallelDim::kTensor), c = size(ParallelDim::kContext);
      const int d = size(ParallelDim::kData), p = size(ParallelDim::kPipeline);
      for (int r = 1; r < d; ++r) {
        if (d % r != 0) continue;
        bool fills = true;
        for (int pp = 0; fills && pp < p; ++pp) {
          for (int tp = 0; fills && tp < t; ++tp) {
            std::map<int, std::pair<int, int>> by_island;  // island -> (members, simulated)
            for (int dp = 0; dp < d; ++dp) {
              for (int cp = 0; cp < c; ++cp) {
                auto& [members, simulated] = by_island[island_of(gpu(tp, cp, dp, pp))];
                ++members;
                if (dp < r) ++simulated;
              }
            }
            const int share = by_island.begin()->second.first;
            for (const auto& [island, counts] : by_island) {
              const auto [members, simulated] = counts;
              if (share < 2 || members != share || (simulated != 0 && simulated != members)) {
                fills = false;
              }
            }
            if (by_island.size() < 2) fills = false;
          }
        }
        // A NIC serves simulated GPUs only or none: the others' flows are not simulated.
        std::map<std::pair<int, int>, std::set<bool>> nic_users;
        for (int pp = 0; fills && pp < p; ++pp) {
          for (int dp = 0; dp < d; ++dp) {
            for (int cp = 0; cp < c; ++cp) {
              for (int tp = 0; tp < t; ++tp) {
                const int g = gpu(tp, cp, dp, pp);
                nic_users[{g / gpus_per_node_, (g % gpus_per_node_) % nics_per_node_}].insert(dp <
                                                                                              r);
              }
            }
          }
        }
        for (const auto& [nic, users] : nic_users) {
          if (users.size() > 1) fills = false;
        }
        if (fills) return r;
      }
      return 0;
    }();
  }
  return *memo_.replicas;
}

bool RankMap::tensor_groups_fill_islands() const {
  if (!memo_.fill_islands) {
    memo_.fill_islands = [&]() -> bool {
      for (const std::vector<int>& g : groups({ParallelDim::kTensor})) {
        std::map<int, int> members;
        for (int gpu : g) ++members[island_of(gpu)];
        if (members.size() < 2) return false;
        for (const auto& [island, n] : members) {
          if (n != std::min(per_island_, island_size_)) return false;
        }
      }
      return true;
    }();
  }
  return *memo_.fill_islands;
}

bool RankMap::tensor_traffic_isolated() const {
  if (!memo_.isolated) {
    memo_.isolated = [&]() -> bool {
      if (!tensor_groups_in_islands()) return false;
      for (int pp = 0; pp + 1 < size(ParallelDim::kPipeline); ++pp) {
        for (int dp = 0; dp < size(ParallelDim::kData); ++dp) {
          for (int cp = 0; cp < size(ParallelDim::kContext); ++cp) {
            for (int tp = 0; tp < size(ParallelDim::kTensor); ++tp) {
              if (island_of(gpu(tp, cp, dp, pp)) == island_of(gpu(tp, cp, dp, pp + 1)))
                return false;
            }
          }
        }
      }
      return true;
    }();
  }
  return *memo_.isolated;
}

}  // namespace trident
