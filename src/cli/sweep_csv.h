// The sweep CSV file: one header line, then one line per point:
//   point,<varied keys...>,<report scalar keys...>,status
// `point` is the point's 0-based index in the full (unsharded) sweep, so shards merge back in
// point order. Fields holding commas or quotes are quoted as in RFC 4180; no field holds a line
// break, so every row is one line. Pure; no I/O.
#ifndef TRIDENT_CLI_SWEEP_CSV_H_
#define TRIDENT_CLI_SWEEP_CSV_H_

#include <string>
#include <vector>

#include "cli/sweep_points.h"

namespace trident {

// The status prefix of a point that failed for an outside reason (a signal, a time limit):
// `sweep --resume` runs such points again.
constexpr const char kInterruptedStatus[] = "error: interrupted: ";

// `value` as one CSV field: line breaks become spaces; quoted when it holds a comma, a quote,
// or leading/trailing spaces.
std::string csv_field(const std::string& value);

// Splits one CSV line (no line break) into its fields, unquoting quoted ones. Returns false
// when the quoting is malformed.
bool split_csv_line(const std::string& line, std::vector<std::string>* fields);

// The header line (with '\n') for `axes`; `report_header` is csv_header() of the report.
std::string sweep_header(const std::vector<SweepAxis>& axes, const std::string& report_header);

// One row line (with '\n'). `report_row` is the report's csv_row() without its line break, or
// "" for a point that produced no report: its report columns are then left empty
// (`report_columns` of them).
std::string sweep_row(const SweepPoint& point, const std::string& report_row, int report_columns,
                      const std::string& status);

// A sweep file read back (for --resume and merge).
struct SweepFileContent {
  std::string header;  // first line, with '\n'
  struct Row {
    int index = 0;
    std::vector<std::string> fields;  // unquoted: index, varied values, report, status
    std::string line;                 // the whole line, with '\n'
    // Whether its status (the last field) starts with kInterruptedStatus.
    bool interrupted() const;
  };
  std::vector<Row> rows;      // complete rows, in file order
  size_t complete_bytes = 0;  // length of the header and complete rows
  bool torn = false;          // text after the last line break was dropped
};

// Reads `content` (the text of file `name`). A last line without its line break is a row cut
// short by a crash: it is dropped and `torn` set. An empty file gives an empty header.
// Throws ConfigError (file `name`, with line number) when the header does not start with
// "point," or a complete row does not have the header's number of fields or a point index.
SweepFileContent parse_sweep_file(const std::string& content, const std::string& name);

}  // namespace trident

#endif  // TRIDENT_CLI_SWEEP_CSV_H_
