#include "cli/sweep_csv.h"

#include <cctype>
#include <cstdlib>

#include "core/errors.h"
#include "core/utf8.h"

namespace trident {
namespace {

ConfigError file_error(const std::string& name, int line, const std::string& what) {
  SourceLocation where;
  where.file = name;
  where.line = line;
  return ConfigError(where, what);
}

bool is_index(const std::string& s) {
  if (s.empty() || s.size() > 9) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

bool SweepFileContent::Row::interrupted() const {
  return !fields.empty() && fields.back().rfind(kInterruptedStatus, 0) == 0;
}

std::string csv_field(const std::string& value) {
  std::string v = sanitize_utf8(value);
  for (char& c : v) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  const bool quote = v.find_first_of(",\"") != std::string::npos ||
                     (!v.empty() && (v.front() == ' ' || v.back() == ' '));
  if (!quote) return v;
  std::string q = "\"";
  for (char c : v) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

bool split_csv_line(const std::string& line, std::vector<std::string>* fields) {
  fields->clear();
  std::string field;
  size_t i = 0;
  for (;;) {
    field.clear();
    if (i < line.size() && line[i] == '"') {
      ++i;
      for (;;) {
        if (i >= line.size()) return false;  // no closing quote
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += line[i++];
      }
      if (i < line.size() && line[i] != ',') return false;  // text after the closing quote
    } else {
      while (i < line.size() && line[i] != ',') {
        if (line[i] == '"') return false;
        field += line[i++];
      }
    }
    fields->push_back(field);
    if (i >= line.size()) return true;
    ++i;  // the comma
  }
}

std::string sweep_header(const std::vector<SweepAxis>& axes, const std::string& report_header) {
  std::string h = "point";
  for (const SweepAxis& a : axes) h += "," + csv_field(a.key);
  std::string report = report_header;
  if (!report.empty() && report.back() == '\n') report.pop_back();
  return h + "," + report + ",status\n";
}

std::string sweep_row(const SweepPoint& point, const std::string& report_row, int report_columns,
                      const std::string& status) {
  std::string r = std::to_string(point.index);
  for (const std::string& v : point.values) r += "," + csv_field(v);
  if (report_row.empty()) {
    r += ",";
    r += std::string(report_columns > 0 ? report_columns - 1 : 0, ',');
  } else {
    r += "," + report_row;
  }
  return r + "," + csv_field(status) + "\n";
}

SweepFileContent parse_sweep_file(const std::string& content, const std::string& name) {
  SweepFileContent out;
  size_t pos = 0;
  int line_no = 0;
  size_t header_fields = 0;
  std::vector<std::string> fields;
  while (pos < content.size()) {
    const size_t nl = content.find('\n', pos);
    if (nl == std::string::npos) {
      out.torn = true;  // a last line cut short
      break;
    }
    ++line_no;
    const std::string line = content.substr(pos, nl - pos);
    if (line_no == 1) {
      if (!split_csv_line(line, &fields) || fields.size() < 3 || fields[0] != "point" ||
          fields.back() != "status") {
        throw file_error(name, 1,
                         "not a trident sweep file (its header must start with "
                         "'point,' and end with ',status')");
      }
      header_fields = fields.size();
      out.header = line + "\n";
    } else {
      if (!split_csv_line(line, &fields) || fields.size() != header_fields ||
          !is_index(fields[0])) {
        throw file_error(name, line_no,
                         "not a row of a trident sweep (expected " + std::to_string(header_fields) +
                             " fields starting with the point index)");
      }
      SweepFileContent::Row row;
      row.index = std::atoi(fields[0].c_str());
      row.line = line + "\n";
      out.rows.push_back(std::move(row));
      out.rows.back().fields = std::move(fields);
      fields = {};
    }
    pos = nl + 1;
    out.complete_bytes = pos;
  }
  return out;
}

}  // namespace trident
