// The ordering and stopping rule of the plan search.
#include "search/plan_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "core/errors.h"
#include "core/fork_pool.h"
#include "layout/program.h"
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

namespace {

// Index of `key` in the table (the table holds it).
size_t dimension_index(const std::string& key) {
  return static_cast<size_t>(find_dimension(key) - search_dimensions().data());
}

// `values` with the entries at `skip` replaced by "*": a family of candidates.
std::string family_key(const std::vector<std::string>& values, const std::vector<size_t>& skip) {
  std::string key;
  for (size_t i = 0; i < values.size(); ++i) {
    const bool skipped = std::find(skip.begin(), skip.end(), i) != skip.end();
    key += (skipped ? std::string("*") : values[i]) + "|";
  }
  return key;
}

// Activation memory grows from full to selective to no recomputation; nothing else in a
// plan's memory depends on it (Korthikanti et al. 2022; layer_activation_bytes).
int recompute_rank(Recompute r) {
  return r == Recompute::kFull ? 0 : r == Recompute::kSelective ? 1 : 2;
}

// Memory and bound of candidates[begin, end) (one worker's share), as "index margin total
// compute pipeline dp" lines for those that fit, after a first line "pruned N".
std::string bound_block(const Scenario& base, const std::vector<Candidate>& all,
                        const std::vector<long>& order, size_t begin, size_t end) {
  const size_t rc = dimension_index("plan.recompute");
  const size_t ogr = dimension_index("plan.overlap_grad_reduce");
  const size_t placement = dimension_index("plan.placement");
  // Families (everything but recompute) whose plan did not fit at a recompute rank: every
  // weaker recompute (more activations) does not fit either.
  std::unordered_map<std::string, int> failed_at;
  long long pruned = 0;
  std::string out;
  // The workload does not depend on overlap_grad_reduce or placement (overlap_param_gather
  // adds per-layer gather points), and candidates that differ only there are consecutive:
  // reuse it.
  std::string last_key;
  Workload w;
  // Programs depend on few plan fields (layout/program.cc): keep them by those.
  std::map<std::vector<int>, std::vector<StageProgram>> programs_memo;
  size_t memo_instrs = 0;  // instructions held by programs_memo
  const std::vector<StageProgram>* programs = nullptr;
  double margin = 0;
  // The candidate closest to fitting among those that do not: bytes short, index.
  double least_short = std::numeric_limits<double>::infinity();
  long least_short_index = -1;
  BoundMemo memo;  // one cluster for the whole block
  for (size_t k = begin; k < end; ++k) {
    const long i = order[k];
    const Candidate& c = all[i];
    const std::string family = family_key(c.values, {rc});
    const int rank = recompute_rank(c.plan.recompute);
    auto f = failed_at.find(family);
    if (f != failed_at.end() && f->second <= rank) {
      ++pruned;
      continue;
    }
    const Scenario sc = with_plan(base, c.plan);
    const std::string key = family_key(c.values, {ogr, placement});
    if (key != last_key) {
      const PlanSpec& p = sc.plan;
      const bool interleaved = p.schedule == ScheduleKind::kInterleaved1F1B;
      const std::vector<int> program_key = {
          p.pipeline,
          p.num_microbatches,
          static_cast<int>(p.schedule),
          interleaved ? p.virtual_stages : 1,
          p.data_context() > 1,
          p.distributed_optimizer && !p.overlap_param_gather && !p.shards_params()};
      auto found = programs_memo.find(program_key);
      if (found == programs_memo.end()) {
        // Bounded memory: at most 512 programs and 2^24 instructions (deep pipelines with
        // thousands of micro-batches hold millions each).
        std::vector<StageProgram> built = build_programs(p);
        size_t size = 0;
        for (const StageProgram& sp : built) size += sp.instrs.size();
        if (programs_memo.size() >= 512 || memo_instrs + size > (size_t{1} << 24)) {
          programs_memo.clear();
          memo_instrs = 0;
        }
        memo_instrs += size;
        found = programs_memo.emplace(program_key, std::move(built)).first;
      }
      programs = &found->second;
      w = build_workload(sc, *programs);
      margin = memory_margin_bytes(sc.cluster, w);
      last_key = key;
    }
    if (!(margin >= 0)) {
      ++pruned;
      if (-margin < least_short) {
        least_short = -margin;
        least_short_index = i;
      }
      if (f == failed_at.end() || rank < f->second) failed_at[family] = rank;
      continue;
    }
    const StepBound b = step_lower_bound(sc, w, *programs, &memo);
    out += fmt::format("{} {:.17g} {:.17g} {:.17g} {:.17g} {:.17g}\n", i, margin, b.total_s,
                       b.compute_s, b.pipeline_s, b.dp_s);
  }
  return fmt::format("pruned {} {:.17g} {}\n", pruned,
                     least_short_index >= 0 ? least_short : 0.0,  // finite: read back by >>
                     least_short_index) +
         out;
}

}  // namespace

SpaceSummary bound_space(const Scenario& base, const SearchContext& context,
                         const SpaceLimits& limits, int shard_index, int shard_count, int jobs) {
  SpaceSummary out;
  std::vector<Candidate> all = enumerate_candidates(context, limits, &out.enumeration);
  out.enumerated = static_cast<long long>(all.size());
  // This shard's candidates, full recomputation first so that a family that does not fit
  // there is known before its weaker variants come.
  std::vector<long> order;
  for (size_t i = 0; i < all.size(); ++i) {
    if (shard_count > 1 && static_cast<int>(i % shard_count) != shard_index) continue;
    order.push_back(static_cast<long>(i));
  }
  std::stable_sort(order.begin(), order.end(), [&](long a, long b) {
    return recompute_rank(all[a].plan.recompute) < recompute_rank(all[b].plan.recompute);
  });
  // Bounding builds each candidate's workload, layer by layer: refuse, before any is built,
  // a space whose building alone would take hours (deterministic, unlike a clock).
  const double work = static_cast<double>(order.size()) * base.model.num_layers;
  if (context.max_bound_work > 0 && work > context.max_bound_work) {
    throw ConfigError(
        SourceLocation{"--max-work", 0, 0, ""},
        fmt::format(
            "bounding this plan space would build {} candidates x {} layers = {:.3g} "
            "layer workloads, more than the limit of {:.3g} (10^8 is some minutes of one CPU); "
            "narrow it with --fix or --vary (e.g. --fix plan.pipeline_parallel=P) or "
            "raise --max-work (0: no limit)",
            order.size(), base.model.num_layers, work, context.max_bound_work));
  }
  // Workers take contiguous blocks (families stay together within a recompute rank).
  const int workers = std::max(1, std::min<int>(jobs, static_cast<int>(order.size() / 256) + 1));
  std::vector<std::string> blocks(workers);
  if (workers == 1) {
    blocks[0] = bound_block(base, all, order, 0, order.size());
  } else {
    long next = 0;
    run_forked(
        workers, [&]() -> long { return next < workers ? next++ : -1; },
        [&](long b) {
          const size_t n = order.size();
          return bound_block(base, all, order, n * b / workers, n * (b + 1) / workers);
        },
        [&](long b, const ForkResult& r) {
          if (!r.ok) throw std::runtime_error("bounding candidates failed: " + r.output);
          blocks[b] = r.output;
        });
  }
  out.least_memory_short_bytes = std::numeric_limits<double>::infinity();
  long least_short_index = -1;
  for (const std::string& text : blocks) {
    std::istringstream in(text);
    std::string word;
    long long pruned = 0;
    double short_bytes = 0;
    long short_index = -1;
    in >> word >> pruned >> short_bytes >> short_index;
    out.pruned_by_memory += pruned;
    // Ties go to the first in enumeration order, whatever the blocks: --jobs changes nothing.
    if (short_index >= 0 &&
        (short_bytes < out.least_memory_short_bytes ||
         (short_bytes == out.least_memory_short_bytes && short_index < least_short_index))) {
      out.least_memory_short_bytes = short_bytes;
      least_short_index = short_index;
    }
    long i = 0;
    BoundedCandidate b;
    while (in >> i >> b.margin_bytes >> b.bound.total_s >> b.bound.compute_s >>
           b.bound.pipeline_s >> b.bound.dp_s) {
      b.index = i;
      b.candidate = all[i];
      out.fitting.push_back(b);
    }
  }
  if (least_short_index >= 0) {
    out.least_memory_short_label = candidate_label(all[least_short_index]);
  }
  std::sort(out.fitting.begin(), out.fitting.end(),
            [](const BoundedCandidate& a, const BoundedCandidate& b) {
              if (a.bound.total_s != b.bound.total_s) return a.bound.total_s < b.bound.total_s;
              return a.index < b.index;
            });
  return out;
}

std::string no_fit_reason(const SpaceSummary& summary) {
  if (summary.enumerated == 0) {
    // The rule that pruned most: usually the one to relax.
    std::string rule;
    long long most = 0;
    for (const auto& [name, n] : summary.enumeration.pruned) {
      if (n > most) {
        most = n;
        rule = name;
      }
    }
    return rule.empty()
               ? "the space is empty"
               : fmt::format("no candidate passes the rules; \"{}\" pruned most ({})", rule, most);
  }
  if (summary.pruned_by_memory > 0) {
    if (std::isfinite(summary.least_memory_short_bytes)) {
      return fmt::format(
          "memory: none of {} candidates fits in the GPU's memory (with the reserve); the "
          "closest, {}, lacks {:.2f} GiB",
          summary.pruned_by_memory, summary.least_memory_short_label,
          summary.least_memory_short_bytes / (1024.0 * 1024 * 1024));
    }
    return fmt::format("memory: none of {} candidates fits in the GPU's memory",
                       summary.pruned_by_memory);
  }
  return "";
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
