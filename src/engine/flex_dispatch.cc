#include "engine/flex_dispatch.h"

#include <algorithm>
#include <map>
#include <utility>

namespace trident {

FlexLayout flex_layout(const std::vector<int>& group, const ExpertRouting& routing,
                       const std::function<int(int)>& island_of) {
  FlexLayout l;
  const int n = static_cast<int>(group.size());
  std::vector<int> ids;  // the GPUs' island ids, in order of first appearance
  for (int m = 0; m < n; ++m) {
    const int id = island_of(group[m]);
    auto it = std::find(ids.begin(), ids.end(), id);
    const int k = static_cast<int>(it - ids.begin());
    if (it == ids.end()) {
      ids.push_back(id);
      l.members.emplace_back();
    }
    l.island.push_back(k);
    l.local.push_back(static_cast<int>(l.members[k].size()));
    l.members[k].push_back(m);
  }
  const int per = n > 0 ? routing.experts / n : 0;
  for (int m = 0; m < n; ++m) {
    l.gpu_hit.push_back(routing_hit_probability(routing, expert_block(m * per, per)));
  }
  for (const std::vector<int>& island : l.members) {
    std::vector<int> experts;
    for (int m : island) {
      const std::vector<int> b = expert_block(m * per, per);
      experts.insert(experts.end(), b.begin(), b.end());
    }
    l.island_hit.push_back(routing_hit_probability(routing, experts));
  }
  return l;
}

std::vector<Phase> lower_flex_dispatch(const std::vector<std::vector<int>>& groups,
                                       double token_bytes, const ExpertRouting& routing,
                                       double load, bool combine,
                                       const std::function<int(int)>& island_of) {
  Phase phase;
  for (const std::vector<int>& g : groups) {
    const int n = static_cast<int>(g.size());
    if (n <= 1) continue;
    const FlexLayout l = flex_layout(g, routing, island_of);
    // Member 0 hosts the busiest experts (as imbalanced_all_to_all_bytes).
    const double hot = std::min(std::max(load, 0.0), double(n)), cold = (n - hot) / (n - 1);
    std::vector<double> to_gpu(n), to_island(l.members.size());
    for (int j = 0; j < n; ++j) to_gpu[j] = std::min(1.0, l.gpu_hit[j] * (j == 0 ? hot : cold));
    for (size_t i = 0; i < l.members.size(); ++i) {
      double w = 0;
      for (int j : l.members[i]) w += j == 0 ? hot : cold;
      to_island[i] = std::min(1.0, l.island_hit[i] * w / l.members[i].size());
    }
    // Bytes per ordered pair of members (sender, receiver of the dispatch).
    std::map<std::pair<int, int>, double> bytes;
    for (int s = 0; s < n; ++s) {
      for (size_t i = 0; i < l.members.size(); ++i) {
        const std::vector<int>& island = l.members[i];
        // The source itself, or the GPU of its local index in another island, holds the token
        // and writes it to the other destination GPUs of that island.
        int holder = s;
        if (static_cast<int>(i) != l.island[s]) {
          holder = island[l.local[s] % island.size()];
          bytes[{s, holder}] += token_bytes * to_island[i];
        }
        for (int j : island) {
          if (j != holder) bytes[{holder, j}] += token_bytes * to_gpu[j];
        }
      }
    }
    for (const auto& [pair, b] : bytes) {
      if (b <= 0) continue;
      const int src = g[pair.first], dst = g[pair.second];
      phase.flows.push_back(combine ? Flow{dst, src, b, 0} : Flow{src, dst, b, 0});
    }
  }
  if (phase.flows.empty()) return {};
  return {phase};
}

DeepEpBytes deepep_bytes(const std::vector<int>& group, double token_bytes,
                         const ExpertRouting& routing, const std::function<int(int)>& island_of) {
  DeepEpBytes out;
  const FlexLayout l = flex_layout(group, routing, island_of);
  const int n = static_cast<int>(group.size());
  if (n == 0) return out;
  for (double p : l.island_hit) out.rdma += token_bytes * p;
  // Every member receives p_j x token_bytes from each of the n members.
  for (double p : l.gpu_hit) out.nvlink += token_bytes * p;
  return out;
}

}  // namespace trident
