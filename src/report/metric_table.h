// The report's metric table: every top-level key of `trident simulate --format json` but its
// objects (optimizer_offload, stages, explain), each declared once with its unit, its doc and
// the Report field it reads. Every writer and reader of report keys goes through it: the JSON
// and CSV writers, the JSON reader of `trident compare`, the comparison's JSON and CSV, the
// plan search's child line, JSON, CSV and shard merge, the Python module and docs/report.md.
// Pure; no I/O.
#ifndef TRIDENT_REPORT_METRIC_TABLE_H_
#define TRIDENT_REPORT_METRIC_TABLE_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "report/metrics.h"

namespace trident {

// The Report field of a metric. An optional one is null in JSON (empty in CSV) when unset.
using MetricField =
    std::variant<std::string Report::*, int Report::*, double Report::*, bool Report::*,
                 unsigned long long Report::*, std::optional<double> Report::*>;

struct Metric {
  const char* key;
  const char* unit;  // "s", "GiB", "fraction", "count", "bool", "text", ...
  const char* doc;   // one or two sentences (docs/report.md)
  MetricField field;
  // Also a column of the report's CSV row (sweeps, `compare --format csv`), in table order;
  // the names, precision and offload keys are JSON only.
  bool csv = true;
};

// Every metric, in the order `simulate --format json` writes them.
const std::vector<Metric>& report_metrics();

// The metric named `key`. Throws std::out_of_range when there is none.
const Metric& find_metric(const std::string& key);

// The value of `m` in `r`, as JSON writes it.
nlohmann::ordered_json metric_json(const Metric& m, const Report& r);

// Sets `m` in *r from `value` as metric_json wrote it (an optional field from null or absent,
// given as null). Throws nlohmann::json::exception when `value` has another type.
void read_metric(const Metric& m, const nlohmann::ordered_json& value, Report* r);

// The value of `m` in `r` as one CSV field: numbers as %.10g, booleans true/false, unset
// optionals empty, text UTF-8-sanitized and quoted when it holds a comma, a quote or a line
// break.
std::string metric_csv(const Metric& m, const Report& r);

// `raw` as one CSV field: UTF-8-sanitized, and quoted (inner quotes doubled, line breaks as
// spaces) when it holds a comma, a quote or a line break.
std::string report_csv_field(const std::string& raw);

// The exposed-communication metrics, one per kind of parallelism, in table order: what a
// comparison shows in seconds and as a share of the step.
struct CommMetric {
  const char* kind;         // "tp", "pp", "dp", "cp", "ep"
  const char* label;        // "exposed TP comm"
  const Metric* metric;     // "<kind>_comm_exposed_s"
  double Report::*seconds;  // its field
};
const std::vector<CommMetric>& comm_metrics();

// The markdown of docs/report.md: the table's keys, units and docs, then the objects.
std::string report_metrics_markdown();

}  // namespace trident

#endif  // TRIDENT_REPORT_METRIC_TABLE_H_
