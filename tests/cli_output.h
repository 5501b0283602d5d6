// Helpers for tests that read what the trident binary wrote: scratch directories, line counts
// and CSV rows by column name.
#ifndef TRIDENT_TESTS_CLI_OUTPUT_H_
#define TRIDENT_TESTS_CLI_OUTPUT_H_

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace trident::testing {

// A fresh, empty scratch directory `name` of this process (emptied if it exists).
inline std::string scratch(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("trident_sweep_cli_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

inline size_t count_lines(const std::string& s) { return std::count(s.begin(), s.end(), '\n'); }

// `line` split at every `sep` (no quoting).
inline std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string f;
  while (std::getline(ss, f, sep)) out.push_back(f);
  return out;
}

using CsvRow = std::vector<std::pair<std::string, std::string>>;

// The CSV rows as lists of (header key, value); values must be unquoted and comma-free.
inline std::vector<CsvRow> rows_of(const std::string& csv) {
  std::stringstream ss(csv);
  std::string line;
  std::getline(ss, line);
  const std::vector<std::string> header = split(line, ',');
  std::vector<CsvRow> rows;
  while (std::getline(ss, line)) {
    const std::vector<std::string> f = split(line, ',');
    CsvRow row;
    for (size_t i = 0; i < header.size() && i < f.size(); ++i) row.push_back({header[i], f[i]});
    rows.push_back(row);
  }
  return rows;
}

// The value of column `key` in `row`; fails the test case when there is none.
inline std::string get(const CsvRow& row, const std::string& key) {
  for (const auto& [k, v] : row) {
    if (k == key) return v;
  }
  FAIL("no column " << key);
  return "";
}

}  // namespace trident::testing

#endif  // TRIDENT_TESTS_CLI_OUTPUT_H_
