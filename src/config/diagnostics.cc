#include "config/diagnostics.h"

#include "config/limits.h"

namespace trident {

void Diagnostics::add(const ConfigError& error, bool plan) {
  ++count_;
  if (problems_.size() < static_cast<std::size_t>(limits::kMaxProblemsPerFile)) {
    problems_.push_back(Problem{error.where(), error.message(), plan});
  }
}

void report(Diagnostics* diag, const ConfigError& error, bool plan) {
  if (diag != nullptr) {
    diag->add(error, plan);
    return;
  }
  if (plan) throw PlanError(error.where(), error.message());
  throw error;
}

}  // namespace trident
