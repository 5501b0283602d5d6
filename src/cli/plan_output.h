// The output of `trident plan`: the ranked plans as a table, JSON or CSV, the line on why the
// winner wins, and the --explain counts. Formats only what the search and the simulations
// gave (no cost is computed here).
#ifndef TRIDENT_CLI_PLAN_OUTPUT_H_
#define TRIDENT_CLI_PLAN_OUTPUT_H_

#include <optional>
#include <string>
#include <vector>

#include "report/metric_table.h"
#include "report/writers.h"
#include "search/plan_search.h"

namespace trident {

// The report metrics a plan row gives (JSON, CSV, the child's line), in column order; the
// step lower bound (step_lower_bound_s) follows the first, step_time_s.
const std::vector<const Metric*>& plan_metrics();

// One simulated plan: the candidate and what its report said.
struct PlanResult {
  Candidate candidate;
  long index = 0;  // enumeration index (the tie-break of equal steps and bounds)
  double bound_s = 0;
  Report report;  // the plan_metrics() fields; the others left at their defaults
  // plan --objective time-to-train: the expected time to train (s), what the plans rank by;
  // < 0 otherwise (and then not printed).
  double time_to_train_s = -1;
};

// Encodes the plan_metrics() of `r` as one line, and reads it back into out->report (false
// when `text` is not such a line). The child simulating a candidate sends this line to the
// parent.
std::string encode_plan_metrics(const Report& r);
bool decode_plan_metrics(const std::string& text, PlanResult* out);

// Reads the plan_metrics() of a plan object of the JSON into out->report. Throws
// nlohmann::json::exception when one is missing or of another type.
void read_plan_metrics(const nlohmann::ordered_json& plan, PlanResult* out);

// A candidate of a shard's proving prefix, for `trident merge` of JSON shards: its
// enumeration index, bound and simulated step (+inf when the simulation failed; NaN for the
// first candidate after the prefix, which was not needed).
struct PlanShardEntry {
  long index = 0;
  double bound_s = 0;
  double step_s = 0;
};

struct PlanSearchOutput {
  std::string title;                // "llama3-70b on dgx-h100: 64 GPUs, seq 8192, global batch 512"
  std::vector<PlanResult> ranked;   // fastest first
  SpaceSummary summary;             // its `fitting` may be cleared; counts are read
  long long fitting = 0;            // candidates that fit (bounded)
  long long simulated = 0;          // the proving prefix (failed ones included)
  long long failed = 0;             // simulations that failed
  double wall_s = 0;                // measured by the command (not printed in JSON/CSV)
  std::optional<PlanResult> given;  // the scenario's own plan, simulated, when searching one
  // --max-simulations reached before the top was proven: the ranked plans are the best of
  // those simulated, and no unsimulated plan can step faster than `unproven_bound_s` (the
  // smallest bound not simulated).
  bool proven = true;
  long long max_simulations = 0;
  int interrupted_by = 0;  // the signal that stopped the simulations (0: none)
  double unproven_bound_s = 0;
  bool explain = false;
  // --shard I/N with N > 1: the CSV ends with the trailer `trident merge` reads
  // (cli/plan_merge.h): the shard, --top and the inputs' fingerprint.
  int shard_index = 0, shard_count = 1;
  int top = 0;
  std::string fingerprint;
  // With a shard, its proving prefix in bound order and the candidate after it (if any): the
  // merge finds the unsharded search's prefix, hence its counts, from them (cli/plan_json_merge.h).
  std::vector<PlanShardEntry> proving;
  std::optional<PlanShardEntry> after_prefix;
};

// Returns "#1 is X s (Y %) faster than #2 (FIELD A vs B, ...): PART −S s, ... (it pays PART
// +T s)": the searched fields whose values differ (`a_set` and `b_set` are the plans'
// KEY=VALUE overrides, candidate_overrides; derived fields left out), then the parts of the
// step (compute, bubble, exposed TP / PP / DP / CP / EP) by how much #1 saves on each, the
// dominant first, and the part it pays most on. Reads only the reports of a and b.
std::string why_line(const PlanResult& a, const std::vector<std::string>& a_set,
                     const PlanResult& b, const std::vector<std::string>& b_set);

// Returns why_line of ranked[0] over ranked[1]; "" with fewer than two.
std::string why_winner(const std::vector<PlanResult>& ranked);

// Returns the line saying that the search stopped at --max-simulations before its top was
// proven, and the least step an unsimulated plan could have. Requires !out.proven.
std::string unproven_note(const PlanSearchOutput& out);
// Returns the output in `format` (table: aligned columns and the why line; json: one object;
// csv: a header and one row per plan, the searched keys as columns, then a sharded search's
// trailer; a sharded search's json ends with the object "shard" that the merge reads).
std::string format_plan_search(const PlanSearchOutput& out, ReportFormat format);

}  // namespace trident

#endif  // TRIDENT_CLI_PLAN_OUTPUT_H_
