// The "where the step goes" section of a report (docs/explain.md): the `explain` object of the
// JSON report and the block that ends the table.
#ifndef TRIDENT_REPORT_EXPLAIN_WRITER_H_
#define TRIDENT_REPORT_EXPLAIN_WRITER_H_

#include <nlohmann/json.hpp>
#include <string>

#include "report/metrics.h"

namespace trident {

// Returns the `explain` object: stage, compute_s, compute (one entry per class: class,
// kernels, seconds, fraction_of_compute, tflop, hbm_gib, fraction_of_peak,
// fraction_of_hbm_bandwidth; null where a fraction does not apply), exposed_comm (tp, pp, dp,
// dp_param_gather, cp, ep: seconds and fraction_of_step), memory_stage and memory_gib
// (weights, gradients, optimizer, activations, cp_buffers, dispatch_buffers, total, reserved).
// Every key is always present.
nlohmann::ordered_json explain_json(const Report& report);

// Returns the table block, starting with an empty line and ending with a newline.
std::string format_explain_table(const Report& report);

}  // namespace trident

#endif  // TRIDENT_REPORT_EXPLAIN_WRITER_H_
