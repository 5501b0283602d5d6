// Pipeline schedules (schedule/program): the instructions of every stage, GPipe, 1F1B and
// interleaved 1F1B, and the ideal bubble fraction.
#include <algorithm>
#include <catch2/catch.hpp>

#include "schedule/program.h"
#include "test_support.h"

using namespace trident;
using namespace trident::testing;

namespace {

int count(const StageProgram& prog, InstrKind kind) {
  return static_cast<int>(std::count_if(prog.instrs.begin(), prog.instrs.end(),
                                        [kind](const Instr& i) { return i.kind == kind; }));
}

// Returns the largest number of micro-batches forwarded but not yet backwarded.
int max_in_flight(const StageProgram& prog) {
  int live = 0, peak = 0;
  for (const Instr& i : prog.instrs) {
    if (i.kind == InstrKind::kForward) peak = std::max(peak, ++live);
    if (i.kind == InstrKind::kBackward) --live;
  }
  return peak;
}

}  // namespace

TEST_CASE("every stage runs each micro-batch forward and backward once", "[schedule]") {
  for (ScheduleKind kind : {ScheduleKind::kGpipe, ScheduleKind::k1F1B}) {
    for (int p : {1, 2, 4, 8}) {
      for (int m : {1, 3, 16}) {
        const auto programs = build_programs(plan(1, p, 2, 1, m, kind));
        REQUIRE(programs.size() == size_t(p));
        for (int s = 0; s < p; ++s) {
          const StageProgram& prog = programs[s];
          CHECK(count(prog, InstrKind::kForward) == m);
          CHECK(count(prog, InstrKind::kBackward) == m);
          CHECK(count(prog, InstrKind::kRecvActivation) == (s > 0 ? m : 0));
          CHECK(count(prog, InstrKind::kSendActivation) == (s < p - 1 ? m : 0));
          CHECK(count(prog, InstrKind::kRecvGradient) == (s < p - 1 ? m : 0));
          CHECK(count(prog, InstrKind::kSendGradient) == (s > 0 ? m : 0));
          CHECK(count(prog, InstrKind::kDpGradReduce) == 1);
          CHECK(prog.instrs.back().kind == InstrKind::kOptimizer);
          // Micro-batches go forward and backward in order (FIFO channels).
          int next_f = 0, next_b = 0;
          for (const Instr& i : prog.instrs) {
            if (i.kind == InstrKind::kForward) CHECK(i.microbatch == next_f++);
            if (i.kind == InstrKind::kBackward) {
              CHECK(i.microbatch < next_f);
              CHECK(i.microbatch == next_b++);
            }
          }
          const int expected = kind == ScheduleKind::kGpipe ? m : std::min(m, p - s);
          CHECK(max_in_flight(prog) == expected);
        }
      }
    }
  }
}

TEST_CASE("interleaved 1F1B runs every (micro-batch, chunk) once, in order", "[schedule]") {
  for (int p : {2, 4}) {
    for (int v : {2, 3}) {
      for (int m : {p, 2 * p, 4 * p}) {
        PlanSpec pl = plan(1, p, 1, 1, m, ScheduleKind::kInterleaved1F1B);
        pl.virtual_stages = v;
        const auto programs = build_programs(pl);
        for (int s = 0; s < p; ++s) {
          const StageProgram& prog = programs[s];
          CHECK(count(prog, InstrKind::kForward) == m * v);
          CHECK(count(prog, InstrKind::kBackward) == m * v);
          std::vector<int> next_f(v, 0), next_b(v, 0);
          for (const Instr& i : prog.instrs) {
            if (i.kind == InstrKind::kForward) CHECK(i.microbatch == next_f[i.chunk]++);
            if (i.kind == InstrKind::kBackward) {
              CHECK(i.microbatch < next_f[i.chunk]);
              CHECK(i.microbatch == next_b[i.chunk]++);
            }
          }
        }
      }
    }
  }
  CHECK(previous_virtual_stage(0, 1, 4).stage == 3);
  CHECK(previous_virtual_stage(0, 1, 4).chunk == 0);
  CHECK(next_virtual_stage(3, 0, 4).stage == 0);
  CHECK(next_virtual_stage(3, 0, 4).chunk == 1);
}

TEST_CASE("ideal bubble fraction is (p-1)/(m+p-1)", "[schedule]") {
  CHECK(ideal_bubble_fraction(plan(1, 8, 1, 1, 64, ScheduleKind::k1F1B)) == Approx(7.0 / 71));
  CHECK(ideal_bubble_fraction(plan(1, 1, 1, 1, 4, ScheduleKind::kGpipe)) == 0);
  PlanSpec il = plan(1, 4, 1, 1, 8, ScheduleKind::kInterleaved1F1B);
  il.virtual_stages = 2;
  CHECK(ideal_bubble_fraction(il) == Approx(3.0 / 19));
}
