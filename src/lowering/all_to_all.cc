#include "lowering/all_to_all.h"

#include <algorithm>

namespace trident {

std::vector<Phase> lower_all_to_all(const std::vector<std::vector<int>>& groups,
                                    double bytes_per_gpu) {
  const int n = groups.empty() ? 0 : static_cast<int>(groups.front().size());
  return lower_all_to_all(groups, std::vector<std::vector<double>>(
                                      n, std::vector<double>(n, n > 0 ? bytes_per_gpu / n : 0)));
}

std::vector<Phase> lower_all_to_all(const std::vector<std::vector<int>>& groups,
                                    const std::vector<std::vector<double>>& bytes) {
  Phase phase;
  for (const std::vector<int>& g : groups) {
    const int n = static_cast<int>(g.size());
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (i == j || bytes[i][j] <= 0) continue;
        phase.flows.push_back(Flow{g[i], g[j], bytes[i][j], 0});
      }
    }
  }
  if (phase.flows.empty()) return {};
  return {phase};
}

void add_island_rings(const std::vector<int>& g, const std::vector<double>& out,
                      const std::vector<double>& in, const std::function<int(int)>& island_of,
                      Phase* phase) {
  const int n = static_cast<int>(g.size());
  std::vector<char> done(n, 0);
  for (int first = 0; first < n; ++first) {
    if (done[first]) continue;
    std::vector<int> island;  // the members in first's island, in group order
    for (int m = first; m < n; ++m) {
      if (!done[m] && island_of(g[m]) == island_of(g[first])) {
        island.push_back(m);
        done[m] = 1;
      }
    }
    const int c = static_cast<int>(island.size());
    if (c <= 1) continue;
    for (int k = 0; k < c; ++k) {
      const int a = island[k], b = island[(k + 1) % c];
      const double bytes = std::max(out[a], in[b]);
      if (bytes > 0) phase->flows.push_back(Flow{g[a], g[b], bytes, 0});
    }
  }
}

std::vector<Phase> lower_all_to_all_via_nics(const std::vector<std::vector<int>>& groups,
                                             const std::vector<std::vector<double>>& bytes,
                                             const std::function<int(int)>& island_of) {
  Phase phase;
  for (const std::vector<int>& g : groups) {
    const int n = static_cast<int>(g.size());
    std::vector<double> nvl_out(n), nvl_in(n);
    for (int i = 0; i < n; ++i) {
      double sent = 0, received = 0;
      for (int j = 0; j < n; ++j) {
        if (i == j) continue;
        if (island_of(g[i]) != island_of(g[j])) {
          sent += bytes[i][j];
          received += bytes[j][i];
        } else {
          nvl_out[i] += bytes[i][j];
          nvl_in[j] += bytes[i][j];
        }
      }
      const double across = std::max(sent, received);
      if (across > 0) phase.flows.push_back(Flow{g[i], g[i], across, 0});
    }
    add_island_rings(g, nvl_out, nvl_in, island_of, &phase);
  }
  if (phase.flows.empty()) return {};
  return {phase};
}

void keep_simulated_flows(std::vector<Phase>* phases, const std::vector<char>& simulated) {
  for (Phase& phase : *phases) {
    auto& flows = phase.flows;
    flows.erase(std::remove_if(flows.begin(), flows.end(),
                               [&](const Flow& f) { return simulated[f.src] == 0; }),
                flows.end());
  }
}

std::vector<std::vector<double>> imbalanced_all_to_all_bytes(int n, double bytes_per_gpu,
                                                             double load, bool combine) {
  std::vector<std::vector<double>> m(n, std::vector<double>(n, bytes_per_gpu / n));
  if (n <= 1) return m;
  const double hot = std::min(std::max(load, 0.0), double(n));
  const double cold = (n - hot) / (n - 1);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const double share = bytes_per_gpu / n * (j == 0 ? hot : cold);
      (combine ? m[j][i] : m[i][j]) = share;
    }
  }
  return m;
}

}  // namespace trident
