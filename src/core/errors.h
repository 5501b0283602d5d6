// Error types thrown at the setup boundary and caught once in main.
#ifndef TRIDENT_CORE_ERRORS_H_
#define TRIDENT_CORE_ERRORS_H_

#include <cstddef>
#include <stdexcept>
#include <string>

namespace trident {

// Where in the user's input a problem sits. `line`/`column` are 1-based; 0 means unknown
// (for example a value that came from `--set`).
struct SourceLocation {
  std::string file;  // path as the user gave it, or "--set"
  int line = 0;
  int column = 0;
  std::string key;  // dotted key path, e.g. "network.nic_bandwidth"
};

// Bad input: a file, key or value the user must fix. Exit code 2.
// what() is the full one-line message: "file:line:col: key: message".
class ConfigError : public std::runtime_error {
 public:
  ConfigError(SourceLocation where, const std::string& message);
  const SourceLocation& where() const { return where_; }
  const std::string& message() const { return message_; }

 private:
  SourceLocation where_;
  std::string message_;
};

// A plan that cannot run on the given model and cluster (divisibility, size). Exit code 2.
class PlanError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

// The simulation itself failed (an engine invariant broke). Exit code 1.
class SimulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Formats "file:line:col: key: message", leaving out the parts that are unknown. Control
// characters are escaped ("\n"), so the result is always one line.
std::string format_location_message(const SourceLocation& where, const std::string& message);

// Returns `text` fit to quote in a message: at most `max_chars` characters (then "..."),
// control characters escaped.
std::string excerpt(const std::string& text, std::size_t max_chars = 60);

}  // namespace trident

#endif  // TRIDENT_CORE_ERRORS_H_
