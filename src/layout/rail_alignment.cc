#include "layout/rail_alignment.h"

#include <map>
#include <vector>

namespace trident {
namespace {

// True when, in every group of `groups`, the k-th member of each island sits on the same rail
// for every k: the inter-island rings of a hierarchical collective join the k-th members of
// the islands (a flat ring, with one member per island, all of them).
bool positions_share_rails(const std::vector<std::vector<int>>& groups, const RankMap& ranks,
                           int gpn) {
  for (const std::vector<int>& g : groups) {
    std::map<int, std::vector<int>> by_island;
    for (int gpu : g) by_island[ranks.island_of(gpu)].push_back(gpu);
    if (by_island.size() < 2) continue;
    const std::vector<int>& first = by_island.begin()->second;
    for (const auto& [island, members] : by_island) {
      if (members.size() != first.size()) return false;
      for (size_t k = 0; k < members.size(); ++k) {
        if (members[k] % gpn != first[k] % gpn) return false;
      }
    }
  }
  return true;
}

// True when consecutive members of every group (pipeline neighbours, context-parallel ring
// steps, the ring closed) that sit in different islands share a rail.
bool neighbours_share_rails(const std::vector<std::vector<int>>& groups, const RankMap& ranks,
                            int gpn) {
  for (const std::vector<int>& g : groups) {
    for (size_t i = 0; i < g.size(); ++i) {
      const int a = g[i], b = g[(i + 1) % g.size()];
      if (ranks.island_of(a) != ranks.island_of(b) && a % gpn != b % gpn) return false;
    }
  }
  return true;
}

}  // namespace

bool transfers_stay_on_rails(const ClusterSpec& c, const RankMap& ranks) {
  if (c.network.topology != Topology::kRailOptimized || !c.network.pxn) return true;
  const int gpn = c.gpus_per_node;
  return positions_share_rails(ranks.groups({ParallelDim::kData, ParallelDim::kContext}), ranks,
                               gpn) &&
         positions_share_rails(ranks.groups({ParallelDim::kData}), ranks, gpn) &&
         neighbours_share_rails(ranks.groups({ParallelDim::kPipeline}), ranks, gpn) &&
         neighbours_share_rails(ranks.groups({ParallelDim::kContext}), ranks, gpn);
}

}  // namespace trident
