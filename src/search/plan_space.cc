// The enumeration of the plan space over the table of plan_dimensions.cc, and candidates'
// overrides and labels.
#include "search/plan_space.h"

#include "config/checks.h"
#include "core/errors.h"
#include "lowering/shortcuts.h"
#include "report/plan_label.h"
#include "search/plan_dimensions.h"

namespace trident {
namespace {

using Values = std::vector<std::string>;

std::string str(int v) { return std::to_string(v); }

std::string placement_text(const std::vector<ParallelDim>& p) {
  std::string out = "[";
  for (size_t i = 0; i < p.size(); ++i)
    out += (i ? ", " : "") + std::string(parallel_dim_name(p[i]));
  return out + "]";
}

struct Enumerator {
  const SearchContext& context;
  const std::vector<SearchDimension>& dims;
  const SpaceLimits& limits;
  std::vector<const Values*> fixed;  // per dimension: the limit's values, or nullptr
  EnumerationStats* stats;
  std::vector<Candidate>* out;
  ScopeMemo scopes;  // the candidates' fast-fidelity shortcuts, by layout

  void visit(size_t i, const PlanSpec& plan, std::vector<std::string>* values) {
    if (i == dims.size()) {
      finish(plan, *values);
      return;
    }
    const Values values_here = fixed[i] ? *fixed[i] : dims[i].candidates(context, plan);
    for (const std::string& v : values_here) {
      ++stats->generated;
      if (context.max_candidates > 0 && stats->generated > 64 * context.max_candidates) {
        too_many(stats->generated, "value combinations visited");
      }
      PlanSpec next = plan;
      if (!dims[i].apply(v, context, &next)) {
        throw ConfigError(SourceLocation{limits.origin(dims[i].key), 0, 0, dims[i].key},
                          "'" + v + "' is not a value of " + dims[i].key);
      }
      const std::string rule = dims[i].admissible(context, next);
      if (!rule.empty()) {
        stats->count(dims[i].key + ": " + rule);
        continue;
      }
      values->push_back(v);
      visit(i + 1, next, values);
      values->pop_back();
    }
  }

  void finish(const PlanSpec& plan, const std::vector<std::string>& values) {
    // The loader's own checks: whatever they refuse, `simulate` would refuse.
    std::vector<SpecIssue> issues = plan_issues(plan, *context.model, *context.cluster);
    if (issues.empty()) issues = simulation_size_issues(plan, *context.cluster);
    if (issues.empty()) {
      issues = simulation_activity_issues(plan, *context.model, *context.cluster, Fidelity::kFast,
                                          &scopes);
    }
    if (!issues.empty()) {
      stats->count("checks: " + issues.front().keys.front());
      return;
    }
    if (context.max_candidates > 0 &&
        static_cast<long long>(out->size()) >= context.max_candidates) {
      too_many(static_cast<long long>(out->size()) + 1, "candidates");
    }
    out->push_back({plan, values});
  }

  [[noreturn]] void too_many(long long count, const char* what) const {
    throw ConfigError(
        SourceLocation{"--max-candidates", 0, 0, ""},
        "the plan space has more than " + std::to_string(count - 1) + " " + what + " (limit " +
            std::to_string(context.max_candidates) + ", at " +
            std::to_string(context.model->num_layers) + " layers on " +
            std::to_string(context.gpus) +
            " GPUs); narrow it with --fix or --vary (e.g. --fix plan.pipeline_parallel=P, "
            "--vary plan.tensor_parallel=4,8) or raise --max-candidates (0: no limit)");
  }
};

}  // namespace

std::string SpaceLimits::origin(const std::string& key) const {
  const auto it = origins.find(key);
  return it == origins.end() ? "--vary" : it->second;
}

void EnumerationStats::count(const std::string& rule) {
  for (auto& [name, n] : pruned) {
    if (name == rule) {
      ++n;
      return;
    }
  }
  pruned.emplace_back(rule, 1);
}

const std::vector<SearchDimension>& search_dimensions() {
  static const std::vector<SearchDimension> dims = build_dimensions();
  return dims;
}

const SearchDimension* find_dimension(const std::string& key) {
  for (const SearchDimension& d : search_dimensions()) {
    if (d.key == key) return &d;
  }
  return nullptr;
}

std::vector<Candidate> enumerate_candidates(const SearchContext& context, const SpaceLimits& limits,
                                            EnumerationStats* stats) {
  const std::vector<SearchDimension>& dims = search_dimensions();
  // plan.distributed_optimizer is the alias of sharding strategies no_shard and optim.
  SpaceLimits resolved = limits;
  for (auto& [key, values] : resolved.values) {
    if (key != "plan.distributed_optimizer") continue;
    const std::string origin = limits.origin(key);
    key = "plan.data_parallel_sharding_strategy";
    resolved.origins[key] = origin;
    for (std::string& v : values) {
      bool on = false;
      if (!parse_search_bool(v, &on)) {
        throw ConfigError(SourceLocation{origin, 0, 0, "plan.distributed_optimizer"},
                          "'" + v + "' is not a value of plan.distributed_optimizer");
      }
      v = on ? "optim" : "no_shard";
    }
  }
  Enumerator e{context, dims,    resolved, std::vector<const Values*>(dims.size(), nullptr),
               stats,   nullptr, {}};
  for (const auto& [key, values] : resolved.values) {
    const SearchDimension* dim = find_dimension(key);
    if (!dim) {
      std::string known;
      for (const SearchDimension& d : dims) known += (known.empty() ? "" : ", ") + d.key;
      throw ConfigError(SourceLocation{resolved.origin(key), 0, 0, key},
                        "is not a searched field (searched: " + known + ")");
    }
    if (values.empty()) {
      throw ConfigError(SourceLocation{resolved.origin(key), 0, 0, key},
                        "needs at least one value");
    }
    e.fixed[static_cast<size_t>(dim - dims.data())] = &values;
  }
  std::vector<Candidate> out;
  e.out = &out;
  PlanSpec start = context.base;
  start.pipeline_layers.clear();
  start.virtual_stages = 1;
  std::vector<std::string> values;
  e.visit(0, start, &values);
  return out;
}

std::vector<std::string> candidate_overrides(const Candidate& c) {
  std::vector<std::string> out;
  const std::vector<SearchDimension>& dims = search_dimensions();
  for (size_t i = 0; i < dims.size() && i < c.values.size(); ++i) {
    out.push_back(dims[i].key + "=" + c.values[i]);
  }
  // Derived from the sharding strategy; named so that a scenario saying
  // distributed_optimizer does not contradict the strategy.
  out.push_back(std::string("plan.distributed_optimizer=") +
                (c.plan.distributed_optimizer ? "true" : "false"));
  out.push_back("plan.data_parallel=" + str(c.plan.data));
  out.push_back("plan.num_microbatches=" + str(c.plan.num_microbatches));
  if (!c.plan.pipeline_layers.empty()) {
    std::string layers;
    for (int n : c.plan.pipeline_layers) layers += (layers.empty() ? "" : ", ") + str(n);
    out.push_back("plan.pipeline_layers=[" + layers + "]");
  }
  return out;
}

std::string candidate_label(const Candidate& c) {
  const PlanSpec& p = c.plan;
  std::string s = plan_label(p) +
                  (p.expert_tensor() != p.tensor ? " etp=" + str(p.expert_tensor()) : "") +
                  " mbs=" + str(p.micro_batch_size);
  s += p.schedule == ScheduleKind::kInterleaved1F1B ? " v=" + str(p.virtual_stages) : " 1f1b";
  if (!p.pipeline_layers.empty()) s += " uneven";
  s += std::string(" rc=") + recompute_name(p.recompute);
  if (p.sequence_parallel) s += " sp";
  if (p.tp_comm_overlap) s += " tpo";
  if (p.dp_sharding == DpSharding::kOptim) s += " dopt";
  if (p.dp_sharding == DpSharding::kOptimGrads) s += " dopt:grads";
  if (p.dp_sharding == DpSharding::kOptimGradsParams) s += " dopt:params";
  if (p.overlap_grad_reduce) s += " ogr";
  if (p.overlap_param_gather && !p.shards_params()) s += " opg";
  if (p.grad_reduce_in_bf16) s += " bf16g";
  if (p.data > 1 && p.pipeline > 1) s += " " + placement_text(p.placement);
  return s;
}

}  // namespace trident
