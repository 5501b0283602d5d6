#include "report/plan_label.h"

#include <fmt/format.h>

namespace trident {

std::string plan_label(int tensor, int context, int pipeline, int data, int expert) {
  return fmt::format("t={}{} p={} d={}{}", tensor,
                     context > 1 ? fmt::format(" cp={}", context) : std::string(), pipeline, data,
                     expert > 1 ? fmt::format(" ep={}", expert) : std::string());
}

std::string plan_label(const PlanSpec& p) {
  return plan_label(p.tensor, p.context, p.pipeline, p.data, p.expert_parallel);
}

std::string plan_label(const Report& r) {
  return plan_label(r.tensor, r.context, r.pipeline, r.data, r.expert_parallel);
}

}  // namespace trident
