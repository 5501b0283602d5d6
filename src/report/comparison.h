// A side-by-side comparison of several simulated variants of one scenario (`trident compare`):
// a table for people, JSON and CSV for programs. Pure; the reports come from `simulate`.
#ifndef TRIDENT_REPORT_COMPARISON_H_
#define TRIDENT_REPORT_COMPARISON_H_

#include <string>
#include <vector>

#include "report/metrics.h"
#include "report/writers.h"

namespace trident {

struct ComparedVariant {
  std::string name;
  std::vector<std::string> overrides;  // "key=value" as applied
  std::string error;                   // why it has no report; "" when it ran
  Report report;                       // the metric table's fields (no stages) when it ran
};

// Reads every key of the metric table (report/metric_table.h) of `simulate --format json`
// output back into a Report (the stages, explain and offload objects are not read). Throws
// std::runtime_error when the text is not such a report (a key missing, or of another type).
Report parse_report_json(const std::string& text);

// Share of the step that a variant's GPUs spend on exposed communication of one kind:
// exposed seconds / step seconds (0 for a zero step).
double comm_share(double exposed_s, double step_time_s);

// The comparison in `format`, ending with a newline. Every variant is compared with the first
// (its "vs first" ratio is step time / first's step time, so 1.25x is 25 % slower); a variant
// that did not run shows its error instead. Table: one column per variant, one row per
// metric (exposed CP and EP rows when a variant has context parallelism or experts). JSON:
// {"scenario", "variants": [{name, overrides, status, error?, <every metric table key>,
// tp/pp/dp/cp/ep_comm_share, step_time_ratio}]}. CSV: a header and one row per variant:
// variant, overrides (joined by ';'), the report's CSV keys, the shares, step_time_ratio,
// status. Output depends only on the input (byte-identical for the same variants).
std::string format_comparison(const std::vector<ComparedVariant>& variants,
                              const std::string& scenario_path, ReportFormat format);

}  // namespace trident

#endif  // TRIDENT_REPORT_COMPARISON_H_
