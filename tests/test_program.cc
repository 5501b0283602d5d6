// Pipeline schedules (layout/program): the instructions of every stage, GPipe, 1F1B and
// interleaved 1F1B, and the ideal bubble fraction.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "layout/program.h"
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

TEST_CASE("the combined 1F1B pairs each steady-state forward with a backward", "[schedule]") {
  // overlap_moe_expert_parallel_comm, p = 1: forward 0 alone, then forward i+1 with backward
  // i, then the last backward alone (combined_1f1b_schedule_for_no_pipelining).
  PlanSpec one = plan(1, 1, 4, 1, 4, ScheduleKind::k1F1B);
  one.overlap_moe_expert_parallel_comm = true;
  const StageProgram prog = build_programs(one).front();
  std::vector<std::string> order;
  for (const Instr& i : prog.instrs) {
    if (i.kind == InstrKind::kForward || i.kind == InstrKind::kBackward) {
      order.push_back((i.kind == InstrKind::kForward ? "F" : "B") + std::to_string(i.microbatch) +
                      (i.with_next ? "+" : ""));
    }
  }
  CHECK(order == std::vector<std::string>{"F0", "F1+", "B0", "F2+", "B1", "F3+", "B2", "B3"});
  CHECK(max_in_flight(prog) == 2);  // one micro-batch more than 1F1B holds
  // Interleaved: one more warm-up forward per stage; every (micro-batch, chunk) once, in
  // order; a combined forward is followed by its backward, with both receives before it and
  // both sends after.
  for (int p : {2, 4}) {
    for (int m : {2 * p, 4 * p}) {
      PlanSpec pl = plan(1, p, 1, 1, m, ScheduleKind::kInterleaved1F1B);
      pl.virtual_stages = 2;
      PlanSpec plain = pl;
      pl.overlap_moe_expert_parallel_comm = true;
      const auto programs = build_programs(pl);
      const auto plain_programs = build_programs(plain);
      for (int s = 0; s < p; ++s) {
        const std::vector<Instr>& in = programs[s].instrs;
        CHECK(count(programs[s], InstrKind::kForward) == 2 * m);
        CHECK(count(programs[s], InstrKind::kBackward) == 2 * m);
        CHECK(max_in_flight(programs[s]) == max_in_flight(plain_programs[s]) + 1);
        std::vector<int> next_f(2, 0), next_b(2, 0);
        int combined = 0;
        for (size_t k = 0; k < in.size(); ++k) {
          if (in[k].kind == InstrKind::kForward) CHECK(in[k].microbatch == next_f[in[k].chunk]++);
          if (in[k].kind == InstrKind::kBackward) {
            CHECK(in[k].microbatch < next_f[in[k].chunk]);
            CHECK(in[k].microbatch == next_b[in[k].chunk]++);
          }
          if (!in[k].with_next) continue;
          ++combined;
          REQUIRE(k + 1 < in.size());
          CHECK(in[k + 1].kind == InstrKind::kBackward);
          CHECK((k == 0 || (in[k - 1].kind != InstrKind::kSendActivation &&
                            in[k - 1].kind != InstrKind::kSendGradient)));
        }
        // Steady-state pairs: every forward after the (p - s - 1) * 2 + p + 1 warm-up ones.
        CHECK(combined == std::max(0, 2 * m - ((p - s - 1) * 2 + p + 1)));
      }
    }
  }
}
