// The space `trident plan` searches: a table with one entry per plan field, each with its
// candidate values and the Megatron-LM constraint that admits them, and the enumeration of
// every plan the table allows. Pure (no SimGrid).
#ifndef TRIDENT_SEARCH_PLAN_SPACE_H_
#define TRIDENT_SEARCH_PLAN_SPACE_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "config/cluster.h"
#include "config/model.h"
#include "config/plan.h"

namespace trident {

// What every candidate shares: the model, the cluster, how many GPUs the plans use and the
// global batch (with precision and the other fixed fields in `base`).
struct SearchContext {
  const ModelSpec* model = nullptr;
  const ClusterSpec* cluster = nullptr;
  int gpus = 0;
  PlanSpec base;  // fields the search does not vary (global_batch_size, precision, ...)
  // Also search the options whose candidates cost the most to simulate and rarely win:
  // tp_comm_overlap, overlap_param_gather and the sharding strategies optim_grads and
  // optim_grads_params (without it they keep the base plan's value; --vary opens each one).
  bool wide = false;
  // At most this many candidates are enumerated (0: no limit): each is held in memory until
  // bounded, so an absurd space (thousands of layers, hundreds of GPUs per island) is refused
  // before it exhausts memory and time. Exceeding it throws ConfigError at "--max-candidates".
  long long max_candidates = 0;
  // At most this many layer workloads (candidates x model layers) are built to bound the
  // candidates (0: no limit); bound_space (search/plan_search.h) throws ConfigError at
  // "--max-work" before building any when the space needs more.
  double max_bound_work = 0;
};

// One searched field. `candidates` lists its values given the fields set before it (the
// table is ordered: tensor before pipeline, micro-batch size after data parallel, ...);
// `apply` sets it on a plan (and the fields it derives: data parallel from t and p, micro-
// batches from the micro-batch size, an uneven layer split from the virtual stages) and
// returns false for a value it cannot parse; `admissible` is the Megatron-LM rule the field
// must satisfy together with the earlier ones ("" when it holds, else the rule's name, which
// --explain counts).
struct SearchDimension {
  std::string key;  // the setting ("plan.tensor_parallel"), as --fix / --vary name it
  std::function<std::vector<std::string>(const SearchContext&, const PlanSpec&)> candidates;
  std::function<bool(const std::string&, const SearchContext&, PlanSpec*)> apply;
  std::function<std::string(const SearchContext&, const PlanSpec&)> admissible;
};

// Returns the table, in enumeration order. A new plan field is searched by adding one entry.
const std::vector<SearchDimension>& search_dimensions();

// Returns the dimension searching `key`, or nullptr.
const SearchDimension* find_dimension(const std::string& key);

// A candidate: its plan (resolved: data parallel, micro-batches, layer split) and the value
// of each searched field, in table order.
struct Candidate {
  PlanSpec plan;
  std::vector<std::string> values;
};

// Per-key restrictions of the space: the values a key may take (--vary, or one value for
// --fix); keys not named take their table candidates. plan.distributed_optimizer names the
// sharding strategies no_shard (false) and optim (true).
struct SpaceLimits {
  std::vector<std::pair<std::string, std::vector<std::string>>> values;
  // Where each key's limit was given ("--fix", "--vary", a scenario file's `search:`), named
  // by the errors about it; a key not here is blamed on "--vary".
  std::map<std::string, std::string> origins;
  // Returns the origin of `key`'s limit.
  std::string origin(const std::string& key) const;
};

// What the enumeration pruned, by rule ("plan.tensor_parallel: attention heads divisible by
// t": the field whose value broke it, then the rule; "checks: KEY" the loader's), in first-
// seen order, and how many plans the table and limits produced before any rule.
struct EnumerationStats {
  long long generated = 0;  // value combinations visited (each rule stops a subtree once)
  std::vector<std::pair<std::string, long long>> pruned;
  void count(const std::string& rule);
};

// Returns every plan of the space that satisfies every rule of the table and the checks
// `simulate` runs (plan_issues and simulation_size_issues of config/checks.h, and the
// activity limit at fast fidelity, lowering/shortcuts.h simulation_activity_issues, so
// `simulate` accepts each one), in a deterministic order. Throws ConfigError (file
// "--max-candidates") when the space holds more than context.max_candidates candidates, or
// visits more than 64 times as many value combinations. Throws ConfigError (its file the
// limit's origin, "--fix" or "--vary") when a limit names a key the table does not search or a
// value its field cannot take.
std::vector<Candidate> enumerate_candidates(const SearchContext& context, const SpaceLimits& limits,
                                            EnumerationStats* stats);

// Returns the candidate's settings as `KEY=VALUE` overrides (the searched fields, then
// plan.data_parallel, plan.num_microbatches and plan.pipeline_layers when uneven), which
// `trident simulate --set` accepts.
std::vector<std::string> candidate_overrides(const Candidate& candidate);

// Returns a short label: "t=8 p=8 d=16 mbs=1 1f1b rc=full sp tpo dopt ogr opg [t,d,p]"
// (with experts "ep=E", and "etp=1" when the experts' tensor parallelism is not t)
// (tpo tp_comm_overlap; dopt, dopt:grads, dopt:params the sharding strategies optim,
// optim_grads, optim_grads_params; opg overlap_param_gather; bf16g grad_reduce_in_bf16).
std::string candidate_label(const Candidate& candidate);

}  // namespace trident

#endif  // TRIDENT_SEARCH_PLAN_SPACE_H_
