#include "lowering/flex_dispatch.h"

#include <algorithm>
#include <map>
#include <utility>

#include "lowering/all_to_all.h"

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

namespace {

// Bytes per ordered pair of members of `g` (sender, receiver of the dispatch), as the header
// describes; sets *l to g's layout.
std::map<std::pair<int, int>, double> flex_pair_bytes(const std::vector<int>& g, double token_bytes,
                                                      const ExpertRouting& routing, double load,
                                                      const std::function<int(int)>& island_of,
                                                      FlexLayout* l) {
  const int n = static_cast<int>(g.size());
  *l = flex_layout(g, routing, island_of);
  // Member 0 hosts the busiest experts (as imbalanced_all_to_all_bytes).
  const double hot = std::min(std::max(load, 0.0), double(n)), cold = (n - hot) / (n - 1);
  std::vector<double> to_gpu(n), to_island(l->members.size());
  for (int j = 0; j < n; ++j) to_gpu[j] = std::min(1.0, l->gpu_hit[j] * (j == 0 ? hot : cold));
  for (size_t i = 0; i < l->members.size(); ++i) {
    double w = 0;
    for (int j : l->members[i]) w += j == 0 ? hot : cold;
    to_island[i] = std::min(1.0, l->island_hit[i] * w / l->members[i].size());
  }
  std::map<std::pair<int, int>, double> bytes;
  for (int s = 0; s < n; ++s) {
    for (size_t i = 0; i < l->members.size(); ++i) {
      const std::vector<int>& island = l->members[i];
      // The source itself, or the GPU of its local index in another island, holds the token
      // and writes it to the other destination GPUs of that island.
      int holder = s;
      if (static_cast<int>(i) != l->island[s]) {
        holder = island[l->local[s] % island.size()];
        bytes[{s, holder}] += token_bytes * to_island[i];
      }
      for (int j : island) {
        if (j != holder) bytes[{holder, j}] += token_bytes * to_gpu[j];
      }
    }
  }
  return bytes;
}

// Appends the flow of `bytes` from member a to member b of `g` (reversed for the combine).
void add_flow(const std::vector<int>& g, int a, int b, double bytes, bool combine, Phase* phase) {
  if (bytes <= 0) return;
  phase->flows.push_back(combine ? Flow{g[b], g[a], bytes, 0} : Flow{g[a], g[b], bytes, 0});
}

}  // namespace

std::vector<Phase> lower_flex_dispatch(const std::vector<std::vector<int>>& groups,
                                       double token_bytes, const ExpertRouting& routing,
                                       double load, bool combine,
                                       const std::function<int(int)>& island_of) {
  Phase phase;
  for (const std::vector<int>& g : groups) {
    if (g.size() <= 1) continue;
    FlexLayout l;
    for (const auto& [pair, b] : flex_pair_bytes(g, token_bytes, routing, load, island_of, &l)) {
      add_flow(g, pair.first, pair.second, b, combine, &phase);
    }
  }
  if (phase.flows.empty()) return {};
  return {phase};
}

std::vector<Phase> lower_flex_dispatch_collapsed(const std::vector<std::vector<int>>& groups,
                                                 double token_bytes, const ExpertRouting& routing,
                                                 double load, bool combine,
                                                 const std::function<int(int)>& island_of) {
  Phase phase;
  for (const std::vector<int>& g : groups) {
    const int n = static_cast<int>(g.size());
    if (n <= 1) continue;
    FlexLayout l;
    // What each member sends and receives (dispatch direction), over RDMA and over NVLink.
    std::vector<double> rdma_out(n), rdma_in(n), nvl_out(n), nvl_in(n);
    for (const auto& [pair, b] : flex_pair_bytes(g, token_bytes, routing, load, island_of, &l)) {
      const bool across = l.island[pair.first] != l.island[pair.second];
      (across ? rdma_out : nvl_out)[pair.first] += b;
      (across ? rdma_in : nvl_in)[pair.second] += b;
    }
    // Each island's members in a ring (the combine runs it backwards).
    const size_t ring = phase.flows.size();
    add_island_rings(g, nvl_out, nvl_in, island_of, &phase);
    if (combine) {
      for (size_t f = ring; f < phase.flows.size(); ++f) {
        std::swap(phase.flows[f].src, phase.flows[f].dst);
      }
    }
    // Out through its own NIC and back (the platform's loopback route).
    for (int m = 0; m < n; ++m) add_flow(g, m, m, std::max(rdma_out[m], rdma_in[m]), false, &phase);
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
