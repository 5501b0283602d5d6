// Helpers for tests of the trace and the SVG timeline: simulate a step with intervals recorded
// in a child process (one SimGrid engine per process) and return both outputs.
#ifndef TRIDENT_TESTS_TRACE_SUPPORT_H_
#define TRIDENT_TESTS_TRACE_SUPPORT_H_

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/isolated_run.h"
#include "engine/simulator.h"
#include "layout/program.h"
#include "report/svg_timeline.h"
#include "report/trace_writer.h"
#include "test_support.h"
#include "workload/stage_work.h"

namespace trident::testing {

struct Outputs {
  std::string trace;  // format_trace
  std::string svg;    // format_svg_timeline
};

// Simulates `sc` in a child process with intervals recorded; returns its trace and timeline.
inline Outputs simulate_outputs(const Scenario& sc, Fidelity fidelity) {
  constexpr char kSeparator = '\x1e';
  const std::string both = run_isolated([&]() {
    const Workload w = build_workload(sc);
    const std::vector<StageProgram> programs = build_programs(sc.plan);
    SimOptions opt;
    opt.fidelity = fidelity;
    opt.record_intervals = true;
    const Timeline tl = simulate_step(sc, w, programs, opt);
    return format_trace(sc, w, tl) + kSeparator + format_svg_timeline(sc, tl);
  });
  const size_t cut = both.find(kSeparator);
  REQUIRE(cut != std::string::npos);
  return {both.substr(0, cut), both.substr(cut + 1)};
}

// t x p x d GPUs (A100 nodes) running 8 layers of a 1024-wide model, m micro-batches.
inline Scenario small_scenario(int t, int p, int d, int m, ScheduleKind schedule) {
  return scenario(a100_cluster((t * p * d + 7) / 8), gpt_model(8, 1024, 16, 512, 32000),
                  plan(t, p, d, 1, m, schedule));
}

// Number of occurrences of `what` in `s`.
inline int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

}  // namespace trident::testing

#endif  // TRIDENT_TESTS_TRACE_SUPPORT_H_
