// What `trident goodput` prints (table, JSON, CSV; docs/goodput.md) and its SVG plot of the
// expected time to train against the checkpoint interval.
#ifndef TRIDENT_CLI_GOODPUT_OUTPUT_H_
#define TRIDENT_CLI_GOODPUT_OUTPUT_H_

#include <string>
#include <vector>

#include "goodput/goodput.h"
#include "report/writers.h"

namespace trident {

// Returns `g` in `format`, ending with a newline. `title` names the scenario; `price` > 0
// adds the cost of the expected GPU-hours at that price per GPU-hour.
std::string format_goodput(const GoodputResult& g, const std::string& title, int gpus, double price,
                           ReportFormat format);

// One point of the plot: an interval, the closed-form expectation and the Monte Carlo mean.
struct IntervalPoint {
  double interval_s = 0;
  double expected_s = 0;
  double simulated_s = 0;
};

// Returns 25 intervals spaced evenly in log from optimum / 8 to optimum x 8 (clipped to the
// work), each with expected_time_s and the mean of a Monte Carlo of `g`'s samples and seed
// (the same draws at every interval, so the curve is smooth). Tokens mode only.
std::vector<IntervalPoint> interval_curve(const GoodputResult& g);

// Returns an SVG plot of `points` (time to train in days against the interval in minutes, log
// x axis) with the optimum and the interval used marked.
std::string goodput_svg(const GoodputResult& g, const std::vector<IntervalPoint>& points,
                        const std::string& title);

}  // namespace trident

#endif  // TRIDENT_CLI_GOODPUT_OUTPUT_H_
