// The ordering and stopping rule of the plan search.
#include "search/plan_search.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>

#include "schedule/program.h"
#include "workload/stage_work.h"

namespace trident {
namespace {

// The top-th smallest of the finite values pushed (a max-heap of the `top` smallest).
class TopK {
 public:
  explicit TopK(size_t top) : top_(top) {}
  void push(double v) {
    if (!std::isfinite(v)) return;
    heap_.push(v);
    if (heap_.size() > top_) heap_.pop();
  }
  bool full() const { return heap_.size() >= top_; }
  double kth() const { return heap_.top(); }

 private:
  size_t top_;
  std::priority_queue<double> heap_;
};

}  // namespace

Scenario with_plan(const Scenario& base, const PlanSpec& plan) {
  Scenario s = base;
  s.plan = plan;
  return s;
}

SpaceSummary bound_space(const Scenario& base, const SearchContext& context,
                         const SpaceLimits& limits, int shard_index, int shard_count) {
  SpaceSummary out;
  std::vector<Candidate> all = enumerate_candidates(context, limits, &out.enumeration);
  out.enumerated = static_cast<long long>(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    if (shard_count > 1 && static_cast<int>(i % shard_count) != shard_index) continue;
    const Scenario sc = with_plan(base, all[i].plan);
    const std::vector<StageProgram> programs = build_programs(sc.plan);
    const Workload w = build_workload(sc, programs);
    const double margin = memory_margin_bytes(sc.cluster, w);
    if (!(margin >= 0)) {
      ++out.pruned_by_memory;
      continue;
    }
    BoundedCandidate b;
    b.candidate = std::move(all[i]);
    b.index = static_cast<long>(i);
    b.margin_bytes = margin;
    b.bound = step_lower_bound(sc, w, programs);
    out.fitting.push_back(std::move(b));
  }
  std::stable_sort(out.fitting.begin(), out.fitting.end(),
                   [](const BoundedCandidate& a, const BoundedCandidate& b) {
                     return a.bound.total_s < b.bound.total_s;
                   });
  return out;
}

size_t proven_prefix(const std::vector<BoundedCandidate>& fitting, const std::vector<double>& steps,
                     size_t top, bool* decided) {
  TopK best(std::max<size_t>(top, 1));
  for (size_t pos = 0; pos < fitting.size(); ++pos) {
    if (best.full() && fitting[pos].bound.total_s > best.kth()) {
      *decided = true;
      return pos;
    }
    if (pos >= steps.size() || std::isnan(steps[pos])) {
      *decided = false;
      return pos;
    }
    best.push(steps[pos]);
  }
  *decided = true;
  return fitting.size();
}

bool worth_simulating(const std::vector<BoundedCandidate>& fitting,
                      const std::vector<double>& steps, size_t top, size_t pos) {
  TopK best(std::max<size_t>(top, 1));
  for (size_t i = 0; i < pos && i < steps.size(); ++i) best.push(steps[i]);
  return !best.full() || fitting[pos].bound.total_s <= best.kth();
}

}  // namespace trident
