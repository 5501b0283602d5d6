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

std::vector<SpecIssue> straggler_issues(const ClusterSpec& c, int plan_gpus) {
  std::vector<SpecIssue> issues;
  const StragglerSpec& s = c.stragglers;
  const auto rank = [&](const char* key, int value, bool used) {
    if (!used || value < plan_gpus) return;
    issues.push_back({{std::string("cluster.stragglers.") + key},
                      std::string(key) + " " + std::to_string(value) +
                          " is not a rank of the plan, which runs on " + std::to_string(plan_gpus) +
                          " GPUs (ranks 0 to " + std::to_string(plan_gpus - 1) + ")"});
  };
  rank("gpu_rank", s.gpu_rank, s.gpu_clock_fraction < 1);
  rank("nvlink_rank", s.nvlink_rank, s.nvlink_fraction < 1);
  rank("nic_rank", s.nic_rank, s.nic_fraction < 1);
  if (s.gpu_clock_fraction < 1 && s.gpu_count > plan_gpus) {
    issues.push_back({{"cluster.stragglers.gpu_count"},
                      "gpu_count " + std::to_string(s.gpu_count) + " is more than the plan's " +
                          std::to_string(plan_gpus) + " GPUs"});
  }
  return issues;
}

}  // namespace trident
