// Report writers: a table for people, JSON for programs, one CSV row for sweeps.
// Output depends only on the report, so the same input gives byte-identical output.
#ifndef TRIDENT_REPORT_WRITERS_H_
#define TRIDENT_REPORT_WRITERS_H_

#include <string>
#include <vector>

#include "report/metrics.h"

namespace trident {

enum class ReportFormat { kTable, kJson, kCsv };
bool parse_report_format(const std::string& name, ReportFormat* out);

// Returns the report in `format`, ending with a newline.
std::string format_report(const Report& report, ReportFormat format);

std::string format_table(const Report& report);
std::string format_json(const Report& report);
// CSV: the scalar keys of the report; header line then one row.
std::string csv_header();
std::string csv_row(const Report& report);

}  // namespace trident

#endif  // TRIDENT_REPORT_WRITERS_H_
