// Problems found in the user's input, either fatal at the first (loading for `simulate`) or
// collected to the end of the file (`trident validate`, which reports them all).
#ifndef TRIDENT_CONFIG_DIAGNOSTICS_H_
#define TRIDENT_CONFIG_DIAGNOSTICS_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "core/errors.h"

namespace trident {

// One problem: where, what, and whether it is a plan problem (PlanError) or bad input.
struct Problem {
  SourceLocation where;
  std::string message;
  bool plan = false;
  // Returns the one-line text "file:line:col: key: message".
  std::string text() const { return format_location_message(where, message); }
};

// Collects problems. Keeps the first limits::kMaxProblemsPerFile and counts the rest.
class Diagnostics {
 public:
  void add(const ConfigError& error, bool plan);
  const std::vector<Problem>& problems() const { return problems_; }
  // Problems seen, including those past the cap.
  std::size_t count() const { return count_; }
  bool empty() const { return count_ == 0; }

 private:
  std::vector<Problem> problems_;
  std::size_t count_ = 0;
};

// Reports `error`: throws it (as PlanError when `plan`) when `diag` is null, else records it.
void report(Diagnostics* diag, const ConfigError& error, bool plan = false);

// Returns how many problems `diag` holds (0 when null): readers compare it before and after a
// part to skip cross checks on values that already failed.
inline std::size_t problem_count(const Diagnostics* diag) {
  return diag == nullptr ? 0 : diag->count();
}

// Runs `part` (a piece of input checking that throws ConfigError). With `diag` null the error
// propagates: the first problem ends the load. Otherwise the error is recorded in `diag` and
// false returned, so the caller can go on with the next field or section. This is the one
// place below main that catches ConfigError.
template <typename F>
bool attempt(Diagnostics* diag, F&& part) {
  if (diag == nullptr) {
    std::forward<F>(part)();
    return true;
  }
  try {
    std::forward<F>(part)();
    return true;
  } catch (const PlanError& e) {
    diag->add(e, true);
  } catch (const ConfigError& e) {
    diag->add(e, false);
  }
  return false;
}

}  // namespace trident

#endif  // TRIDENT_CONFIG_DIAGNOSTICS_H_
