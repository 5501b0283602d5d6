// Sweep points: the axes given by `--vary` and a scenario's `sweep:` block, their cartesian
// product in a fixed order, and the shards of that list. Pure; no I/O, no processes.
#ifndef TRIDENT_CLI_SWEEP_POINTS_H_
#define TRIDENT_CLI_SWEEP_POINTS_H_

#include <string>
#include <utility>
#include <vector>

#include "config/scenario.h"

namespace trident {

// Splits `text` at commas that are outside brackets, braces and quotes, so a value such as
// "[data, tensor, pipeline]" stays whole. Trims spaces around each piece. "" gives {}.
std::vector<std::string> split_top_level(const std::string& text);

// Expands every "..." item of `values` into the doubling run between its neighbours:
// {"1", "2", "4", "...", "128"} -> 1, 2, 4, 8, 16, 32, 64, 128. The neighbours must be positive
// integers and the right one the left one times a power of two.
// Throws ConfigError (file `label`) otherwise, or when "..." is first or last.
std::vector<std::string> expand_doubling(const std::vector<std::string>& values,
                                         const std::string& label);

// Parses one `--vary key=v1,v2,...` argument (without "--vary"): checks the key like `--set`
// does (cluster./model./plan. and a known setting, with a did-you-mean hint), splits the values
// with split_top_level and expands "..." with expand_doubling.
// Throws ConfigError (file "--vary <text>") on a missing '=', an unknown key, no values or a
// bad range.
SweepAxis parse_vary(const std::string& text);

// The axes of a sweep: the scenario's `sweep:` axes in file order (their "..." items expanded
// too), then each `--vary` axis in command-line order; a `--vary` axis whose key the scenario
// already sweeps replaces that axis in place. Throws ConfigError when two `--vary` give the
// same key.
std::vector<SweepAxis> combine_axes(const std::vector<SweepAxis>& scenario_axes,
                                    const std::vector<SweepAxis>& vary_axes);

// One point: a value for every axis, in axis order, and its 0-based index in the full list.
struct SweepPoint {
  int index = 0;
  std::vector<std::string> values;
};

// The most points a sweep may have (the product of its axes' sizes), checked before any is
// built: each point is a process, and 28 million of them exhausted memory before one ran.
constexpr long long kMaxSweepPoints = 100000;

// Returns the number of points of `axes` (the product of their sizes; 0 without axes), or
// kMaxSweepPoints + 1 when it is larger than kMaxSweepPoints.
long long count_points(const std::vector<SweepAxis>& axes);

// The cartesian product of `axes`, first axis outermost (slowest-varying), last axis fastest:
// for axes a = {1, 2} and b = {x, y}: (1, x), (1, y), (2, x), (2, y). No axes: no points.
// Throws ConfigError (file "--vary") naming kMaxSweepPoints when there would be more.
std::vector<SweepPoint> expand_points(const std::vector<SweepAxis>& axes);

// `--shard i/N`: 0 <= i < N. Parses "i/N"; throws ConfigError (file "--shard") otherwise.
struct Shard {
  int index = 0;
  int count = 1;
};
Shard parse_shard(const std::string& text);

// The points of shard `shard`: every point whose index is i modulo N, in point order. Taking
// every N-th point spreads expensive corners of the sweep over the shards.
std::vector<SweepPoint> select_shard(const std::vector<SweepPoint>& points, const Shard& shard);

// The `--set key=value` arguments that run `point`.
std::vector<std::string> point_overrides(const std::vector<SweepAxis>& axes,
                                         const SweepPoint& point);

}  // namespace trident

#endif  // TRIDENT_CLI_SWEEP_POINTS_H_
