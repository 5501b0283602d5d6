#include "engine/collective_lowering.h"

#include <algorithm>
#include <map>

namespace trident {
namespace {

// Appends `steps` ring steps of `chunk` bytes over each ring to `out`, collapsed or not.
void ring_steps(const std::vector<std::vector<int>>& rings, int steps, double chunk,
                const LoweringOptions& opt, std::vector<Phase>* out) {
  if (steps <= 0 || rings.empty() || rings.front().size() < 2) return;
  Phase phase;
  phase.steps = opt.collapse_steps ? steps : 1;
  for (const auto& ring : rings) {
    const size_t n = ring.size();
    for (size_t i = 0; i < n; ++i) {
      phase.flows.push_back({ring[i], ring[(i + 1) % n], chunk * phase.steps});
    }
  }
  const int phases = opt.collapse_steps ? 1 : steps;
  for (int i = 0; i < phases; ++i) out->push_back(phase);
}

// Ring steps of each op over rings of n members: all-reduce 2(n-1), the others n-1.
int op_steps(CollectiveOp op, int n) {
  return op == CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1;
}

// Splits every group by island. Returns false when islands hold unequal member counts or the
// split gains nothing (one member per island, or one island).
bool split_by_island(const std::vector<std::vector<int>>& groups,
                     const std::function<int(int)>& island_of, std::vector<std::vector<int>>* intra,
                     std::vector<std::vector<int>>* inter) {
  for (const auto& g : groups) {
    std::map<int, std::vector<int>> by_island;
    for (int gpu : g) by_island[island_of(gpu)].push_back(gpu);
    const size_t c = by_island.begin()->second.size();
    if (by_island.size() < 2 || c < 2) return false;
    for (const auto& [isl, members] : by_island) {
      if (members.size() != c) return false;
      intra->push_back(members);
    }
    for (size_t j = 0; j < c; ++j) {
      std::vector<int> ring;
      for (const auto& [isl, members] : by_island) ring.push_back(members[j]);
      inter->push_back(ring);
    }
  }
  return true;
}

}  // namespace

std::vector<Phase> lower_collective(CollectiveOp op, const std::vector<std::vector<int>>& groups,
                                    double bytes, const std::function<int(int)>& island_of,
                                    const LoweringOptions& opt) {
  std::vector<Phase> out;
  if (groups.empty() || groups.front().size() < 2 || bytes <= 0) return out;
  const int n = static_cast<int>(groups.front().size());
  std::vector<std::vector<int>> intra, inter;
  if (op == CollectiveOp::kAllReduce && opt.in_switch_efficiency > 0) {
    bool one_island = true;
    for (const auto& g : groups) {
      for (int gpu : g) one_island = one_island && island_of(gpu) == island_of(g.front());
    }
    if (one_island) {
      // Up to the switch and back: each GPU's link carries the buffer once in each direction.
      Phase phase;
      for (const auto& g : groups) {
        for (size_t i = 0; i < g.size(); ++i) {
          phase.flows.push_back({g[i], g[(i + 1) % g.size()], bytes, opt.in_switch_efficiency});
        }
      }
      out.push_back(std::move(phase));
      return out;
    }
  }
  if (!split_by_island(groups, island_of, &intra, &inter)) {
    ring_steps(groups, op_steps(op, n), bytes / n, opt, &out);
    return out;
  }
  const int c = static_cast<int>(intra.front().size());
  const int k = static_cast<int>(inter.front().size());
  // Reduce-scatter inside islands, the inter-island part on 1/c of the data, all-gather inside.
  if (op != CollectiveOp::kAllGather) ring_steps(intra, c - 1, bytes / c, opt, &out);
  ring_steps(inter, op_steps(op, k), bytes / (double(c) * k), opt, &out);
  if (op != CollectiveOp::kReduceScatter) ring_steps(intra, c - 1, bytes / c, opt, &out);
  return out;
}

std::vector<Phase> lower_mirrored_ring(CollectiveOp op, int gpu, int n, double bytes) {
  Phase phase;
  phase.steps = op_steps(op, n);
  phase.flows.push_back({gpu, gpu, bytes / n * phase.steps});
  return {phase};
}

std::vector<Phase> lower_ring_exchange(const std::vector<std::vector<int>>& rings, double bytes) {
  Phase phase;
  for (const std::vector<int>& ring : rings) {
    const size_t n = ring.size();
    for (size_t i = 0; i < n; ++i) phase.flows.push_back({ring[i], ring[(i + 1) % n], bytes});
  }
  return {phase};
}

}  // namespace trident
