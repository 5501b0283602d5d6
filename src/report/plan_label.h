// The one short label of a plan's parallel sizes, "t=8 cp=2 p=4 d=2 ep=8" (cp and ep only when
// above 1), shared by the report table, the comparison, the trace, the SVG timeline and the
// plan search's candidate labels, so that they never disagree. Pure.
#ifndef TRIDENT_REPORT_PLAN_LABEL_H_
#define TRIDENT_REPORT_PLAN_LABEL_H_

#include <string>

#include "config/plan.h"
#include "report/metrics.h"

namespace trident {

std::string plan_label(int tensor, int context, int pipeline, int data, int expert);
// plan.expert_parallel as given (1 unless the model has experts).
std::string plan_label(const PlanSpec& plan);
// The report's sizes (its expert_parallel is 1 for a dense model).
std::string plan_label(const Report& report);

}  // namespace trident

#endif  // TRIDENT_REPORT_PLAN_LABEL_H_
