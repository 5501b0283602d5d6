#include "workload/expert_routing.h"

#include <algorithm>
#include <cmath>

namespace trident {
namespace {

// C(n - w, k) / C(n, k): the chance that k of n items avoid w given ones.
long double miss(long double n, long double w, int k) {
  long double p = 1;
  for (int i = 0; i < k; ++i) {
    if (n - w - i <= 0) return 0;
    p *= (n - w - i) / (n - i);
  }
  return p;
}

long double log_choose(long double n, long double r) {
  if (r < 0 || r > n) return -INFINITY;
  return std::lgamma(n + 1) - std::lgamma(r + 1) - std::lgamma(n - r + 1);
}

bool grouped(const ExpertRouting& r) {
  return r.groups > 1 && r.group_topk >= 1 && r.group_topk < r.groups;
}

}  // namespace

ExpertRouting expert_routing(const ModelSpec& m) {
  ExpertRouting r;
  r.experts = m.num_experts;
  r.topk = m.moe_router_topk;
  r.groups = m.moe_router_num_groups;
  r.group_topk = m.moe_router_group_topk;
  return r;
}

std::vector<int> expert_block(int first, int count) {
  std::vector<int> out(std::max(count, 0));
  for (int i = 0; i < count; ++i) out[i] = first + i;
  return out;
}

double routing_hit_probability(const ExpertRouting& r, const std::vector<int>& unit) {
  const int u = static_cast<int>(unit.size());
  if (u == 0 || r.experts <= 0) return 0;
  if (!grouped(r)) return static_cast<double>(1 - miss(r.experts, u, r.topk));
  const int size = r.experts / r.groups, picked = r.group_topk;
  // The unit's experts in each group it touches.
  std::vector<int> overlap(r.groups, 0);
  for (int e : unit) overlap[std::min(std::max(e / size, 0), r.groups - 1)] += 1;
  std::vector<int> touched;
  for (int o : overlap) {
    if (o > 0) touched.push_back(o);
  }
  const int z = r.groups - static_cast<int>(touched.size());
  // ways[j][w]: subsets of j touched groups holding w of the unit's experts.
  const int jmax = std::min(picked, static_cast<int>(touched.size()));
  std::vector<std::vector<long double>> ways(jmax + 1, std::vector<long double>(u + 1, 0));
  ways[0][0] = 1;
  for (int o : touched) {
    for (int j = jmax; j >= 1; --j) {
      for (int w = u; w >= o; --w) ways[j][w] += ways[j - 1][w - o];
    }
  }
  const long double all = log_choose(r.groups, picked);
  const long double pool = static_cast<long double>(picked) * size;
  long double missed = 0;
  for (int j = 0; j <= jmax; ++j) {
    const long double rest = log_choose(z, picked - j);
    if (std::isinf(rest)) continue;
    for (int w = 0; w <= u; ++w) {
      if (ways[j][w] <= 0) continue;
      missed += ways[j][w] * std::exp(rest - all) * miss(pool, w, r.topk);
    }
  }
  return static_cast<double>(std::min<long double>(1, std::max<long double>(0, 1 - missed)));
}

double expected_distinct_units(const ExpertRouting& r, int units) {
  if (units <= 0 || r.experts <= 0) return 0;
  const int per = r.experts / units;
  double sum = 0;
  for (int i = 0; i < units; ++i) sum += routing_hit_probability(r, expert_block(i * per, per));
  return sum;
}

}  // namespace trident
