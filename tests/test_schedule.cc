// Pipeline schedules, rank placement and collective lowering (pure code).
#include <algorithm>
#include <catch2/catch.hpp>

#include "engine/collective_lowering.h"
#include "schedule/program.h"
#include "schedule/rank_map.h"
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

TEST_CASE("placement decides whether TP groups sit in one island", "[schedule]") {
  const ClusterSpec c = a100_cluster(4);
  PlanSpec pl = plan(8, 2, 2, 1, 4, ScheduleKind::k1F1B);
  RankMap intra(pl, c);
  CHECK(intra.tensor_group(1, 1) == std::vector<int>{24, 25, 26, 27, 28, 29, 30, 31});
  CHECK(intra.tensor_groups_in_islands());
  CHECK(intra.tensor_traffic_isolated());
  CHECK(intra.data_group(0, 0) == std::vector<int>{0, 8});
  pl.placement = {ParallelDim::kData, ParallelDim::kPipeline, ParallelDim::kTensor};
  RankMap inter(pl, c);
  CHECK(inter.tensor_group(0, 0) == std::vector<int>{0, 4, 8, 12, 16, 20, 24, 28});
  CHECK_FALSE(inter.tensor_groups_in_islands());
  // Pipeline neighbours in the same island share NVLink links with TP traffic.
  PlanSpec small = plan(2, 2, 1, 1, 4, ScheduleKind::k1F1B);
  RankMap shared(small, c);
  CHECK(shared.tensor_groups_in_islands());
  CHECK_FALSE(shared.tensor_traffic_isolated());
}

TEST_CASE("ring all-reduce lowers to 2(n-1) steps of S/n per GPU", "[lowering]") {
  const auto island = [](int gpu) { return gpu / 8; };
  LoweringOptions every_step;
  every_step.collapse_steps = false;
  const auto phases =
      lower_collective(CollectiveOp::kAllReduce, {{0, 1, 2, 3}}, 400, island, every_step);
  REQUIRE(phases.size() == 6);
  for (const Phase& ph : phases) {
    REQUIRE(ph.flows.size() == 4);
    CHECK(ph.flows[0].bytes == 100);
    CHECK(ph.flows[3].src == 3);
    CHECK(ph.flows[3].dst == 0);
  }
  const auto collapsed =
      lower_collective(CollectiveOp::kAllReduce, {{0, 1, 2, 3}}, 400, island, {});
  REQUIRE(collapsed.size() == 1);
  CHECK(collapsed[0].steps == 6);
  CHECK(collapsed[0].flows[0].bytes == 600);
}

TEST_CASE("a group spanning islands with several members each goes hierarchical", "[lowering]") {
  const auto island = [](int gpu) { return gpu / 8; };
  // 2 islands x 2 members: reduce-scatter inside (1 step), ring across (2 steps), all-gather.
  const auto phases = lower_collective(CollectiveOp::kAllReduce, {{0, 1, 8, 9}}, 400, island, {});
  REQUIRE(phases.size() == 3);
  CHECK(phases[0].flows.size() == 4);  // two intra-island rings of 2
  CHECK(phases[0].flows[0].bytes == 200);
  CHECK(phases[1].flows[0].src == 0);
  CHECK(phases[1].flows[0].dst == 8);
  CHECK(phases[1].flows[0].bytes == 2 * 100);  // 2 steps of S/(c k) collapsed
  // One member per island: a flat ring.
  CHECK(lower_collective(CollectiveOp::kAllReduce, {{0, 8, 16}}, 300, island, {}).size() == 1);
}

TEST_CASE("a mirrored ring edge carries one edge's collapsed bytes", "[lowering]") {
  const auto phases = lower_mirrored_ring(CollectiveOp::kAllReduce, 24, 8, 800);
  REQUIRE(phases.size() == 1);
  CHECK(phases[0].steps == 14);
  CHECK(phases[0].flows[0].src == 24);
  CHECK(phases[0].flows[0].dst == 24);
  CHECK(phases[0].flows[0].bytes == 1400);
  CHECK(lower_mirrored_ring(CollectiveOp::kReduceScatter, 0, 8, 800)[0].steps == 7);
}
