#include "lowering/fluid_share.h"

#include <algorithm>
#include <limits>
#include <map>

namespace trident {

std::vector<double> max_min_rates(const std::vector<const FluidFlow*>& flows) {
  const double inf = std::numeric_limits<double>::infinity();
  const size_t n = flows.size();
  std::vector<double> rate(n, -1);
  // Capacity left on each link, and the flows on it not yet fixed.
  std::map<int, double> left;
  for (const FluidFlow* f : flows) {
    for (const auto& [link, capacity] : f->links) left.emplace(link, capacity);
  }
  for (size_t fixed = 0; fixed < n;) {
    // The lowest level a link's fair share or a flow's bound sets: those reaching it are fixed
    // there (progressive filling).
    std::map<int, int> unfixed;
    for (size_t i = 0; i < n; ++i) {
      if (rate[i] >= 0) continue;
      for (const auto& link : flows[i]->links) ++unfixed[link.first];
    }
    double level = inf;
    for (const auto& [link, count] : unfixed) level = std::min(level, left[link] / count);
    for (size_t i = 0; i < n; ++i) {
      if (rate[i] < 0) level = std::min(level, flows[i]->rate);
    }
    std::vector<size_t> now_fixed;
    for (size_t i = 0; i < n; ++i) {
      if (rate[i] >= 0) continue;
      bool at_level = flows[i]->rate <= level;
      for (const auto& link : flows[i]->links) {
        at_level = at_level || left[link.first] / unfixed[link.first] <= level;
      }
      if (at_level) now_fixed.push_back(i);
    }
    for (size_t i : now_fixed) {
      rate[i] = level;
      for (const auto& link : flows[i]->links) {
        left[link.first] = std::max(0.0, left[link.first] - level);
      }
    }
    fixed += now_fixed.size();
  }
  return rate;
}

FluidShare fluid_share(const std::vector<FluidFlow>& flows) {
  const double inf = std::numeric_limits<double>::infinity();
  const size_t n = flows.size();
  FluidShare out;
  out.spans.resize(n);
  out.end.assign(n, -1);
  std::vector<double> left(n);
  for (size_t i = 0; i < n; ++i) {
    left[i] = flows[i].bytes;
    if (left[i] <= 0) out.end[i] = flows[i].start;
  }
  double t = inf;
  for (size_t i = 0; i < n; ++i) {
    if (out.end[i] < 0) t = std::min(t, flows[i].start);
  }
  for (;;) {
    std::vector<size_t> moving;
    double next = inf;  // the next start
    for (size_t i = 0; i < n; ++i) {
      if (out.end[i] >= 0) continue;
      if (flows[i].start <= t) {
        moving.push_back(i);
      } else {
        next = std::min(next, flows[i].start);
      }
    }
    if (moving.empty()) {
      if (next == inf) break;
      t = next;
      continue;
    }
    std::vector<const FluidFlow*> active;
    for (size_t i : moving) active.push_back(&flows[i]);
    const std::vector<double> rate = max_min_rates(active);
    // Until the next start or the first arrival, whichever is first.
    size_t first = moving.front();
    double arrival = inf;
    for (size_t k = 0; k < moving.size(); ++k) {
      const double at = t + left[moving[k]] / rate[k];
      if (at < arrival) {
        arrival = at;
        first = moving[k];
      }
    }
    const double until = std::min(arrival, next);
    for (size_t k = 0; k < moving.size(); ++k) {
      const size_t i = moving[k];
      if (rate[k] < flows[i].rate) out.slowed = true;
      out.spans[i].push_back({t, until, rate[k]});
      left[i] -= rate[k] * (until - t);
      // Arrivals at this instant (the first, and any within rounding of it).
      if (i == first && arrival <= next) left[i] = 0;
      if (left[i] <= 1e-9 * flows[i].bytes) out.end[i] = until;
    }
    t = until;
  }
  return out;
}

}  // namespace trident
