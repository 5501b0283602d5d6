#include "config/stragglers.h"

#include <algorithm>
#include <string>

namespace trident {

bool has_slow_links(const StragglerSpec& s) {
  return s.nvlink_fraction < 1 || s.nic_fraction < 1 || s.background_traffic > 0;
}

bool has_stragglers(const ClusterSpec& c) {
  return c.stragglers.gpu_clock_fraction < 1 || has_slow_links(c.stragglers);
}

ClusterSpec without_stragglers(const ClusterSpec& c) {
  ClusterSpec out = c;
  out.stragglers = StragglerSpec();
  return out;
}

std::vector<int> slow_gpus(const StragglerSpec& s, int gpus) {
  std::vector<int> out;
  if (s.gpu_clock_fraction >= 1 || gpus <= 0) return out;
  const int count = std::min(s.gpu_count, gpus);
  const int spacing = gpus / count;
  for (int i = 0; i < count; ++i) out.push_back((s.gpu_rank + i * spacing) % gpus);
  std::sort(out.begin(), out.end());
  return out;
}

int plan_gpus_spanned(const PlanSpec& p, const ClusterSpec& c) {
  const int n = p.gpus(), u = p.gpus_per_island, island = c.nvlink.island_size;
  if (n <= 0 || u <= 0 || island <= 0 || u >= island) return n;
  return (n - 1) / u * island + (n - 1) % u + 1;  // as RankMap places rank n - 1
}

std::vector<SpecIssue> straggler_issues(const ClusterSpec& c, const PlanSpec& p) {
  std::vector<SpecIssue> issues;
  const StragglerSpec& s = c.stragglers;
  const int spanned = plan_gpus_spanned(p, c);
  const int u = p.gpus_per_island, island = c.nvlink.island_size;
  const auto rank = [&](const char* key, int gpu, bool used) {
    if (!used) return;
    const bool left_out = u > 0 && island > 0 && u < island && gpu % island >= u;
    if (gpu < spanned && !left_out) return;
    issues.push_back({{std::string("cluster.stragglers.") + key},
                      std::string(key) + " " + std::to_string(gpu) +
                          " is not a GPU the plan runs on (it spans GPUs 0 to " +
                          std::to_string(spanned - 1) +
                          (left_out ? ", leaving this one out)" : ")")});
  };
  rank("gpu_rank", s.gpu_rank, s.gpu_clock_fraction < 1);
  rank("nvlink_rank", s.nvlink_rank, s.nvlink_fraction < 1);
  rank("nic_rank", s.nic_rank, s.nic_fraction < 1);
  if (s.gpu_clock_fraction < 1 && s.gpu_count > p.gpus()) {
    issues.push_back({{"cluster.stragglers.gpu_count"},
                      "gpu_count " + std::to_string(s.gpu_count) + " is more than the plan's " +
                          std::to_string(p.gpus()) + " GPUs"});
  }
  // The rail-optimized fabric (platform/fabric_rail.cc) builds its NICs per rail switch; a
  // degraded one is not placed there, so it is refused rather than ignored.
  if (s.nic_fraction < 1 && c.network.topology == Topology::kRailOptimized) {
    issues.push_back({{"cluster.stragglers.nic_fraction", "cluster.network.topology"},
                      "a degraded NIC is simulated on single-switch and fat-tree fabrics, not "
                      "on rail-optimized ones"});
  }
  return issues;
}

}  // namespace trident
