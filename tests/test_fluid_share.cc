// Max-min fair sharing over time (lowering/fluid_share): progressive filling with per-flow
// bounds, and arrivals and late starts that change the allocation.
#include <catch2/catch.hpp>

#include "lowering/fluid_share.h"

using namespace trident;

TEST_CASE("fluid share: max-min rates fill the tightest link first", "[fluid_share]") {
  // A and B share link 1 (capacity 1), B and C link 2 (capacity 2): link 1 fixes A and B at
  // 0.5, C takes what B leaves of link 2.
  const FluidFlow a{0, 1, 10, {{1, 1.0}}}, b{0, 1, 10, {{1, 1.0}, {2, 2.0}}};
  const FluidFlow c{0, 1, 10, {{2, 2.0}}};
  const std::vector<double> r = max_min_rates({&a, &b, &c});
  CHECK(r[0] == Approx(0.5));
  CHECK(r[1] == Approx(0.5));
  CHECK(r[2] == Approx(1.5));
  // A flow bounded below its fair share leaves the rest to the others.
  const FluidFlow slow{0, 1, 0.25, {{1, 1.0}}}, fast{0, 1, 10, {{1, 1.0}}};
  const std::vector<double> q = max_min_rates({&slow, &fast});
  CHECK(q[0] == Approx(0.25));
  CHECK(q[1] == Approx(0.75));
}

TEST_CASE("fluid share: arrivals hand their share to the flows left", "[fluid_share]") {
  // Three flows of 1, 2 and 3 bytes on one link of 3: 1 each until the first arrives at 1;
  // then 1.5 each, the second arriving at 1 + 1 / 1.5; the third alone at its rate, 3.
  std::vector<FluidFlow> flows;
  for (double bytes : {1.0, 2.0, 3.0}) flows.push_back({0, bytes, 3, {{7, 3.0}}});
  const FluidShare s = fluid_share(flows);
  CHECK(s.end[0] == Approx(1.0));
  CHECK(s.end[1] == Approx(1.0 + 1.0 / 1.5));
  CHECK(s.end[2] == Approx(1.0 + 1.0 / 1.5 + (3 - 1 - 1) / 3.0));
  CHECK(s.slowed);
  // Each flow's spans cover [its start, its arrival) and carry its bytes.
  for (size_t i = 0; i < flows.size(); ++i) {
    double bytes = 0, t = flows[i].start;
    for (const FluidSpan& span : s.spans[i]) {
      CHECK(span.from == Approx(t));
      bytes += (span.to - span.from) * span.rate;
      t = span.to;
    }
    CHECK(t == Approx(s.end[i]));
    CHECK(bytes == Approx(flows[i].bytes));
  }
}

TEST_CASE("fluid share: a late start slows a flow only while both move bytes", "[fluid_share]") {
  // A moves 2 from 0 at 1; B moves 0.5 from 1: half each until B arrives at 2, A alone after.
  const FluidShare s = fluid_share({{0, 2, 1, {{0, 1.0}}}, {1, 0.5, 1, {{0, 1.0}}}});
  CHECK(s.end[1] == Approx(2.0));
  CHECK(s.end[0] == Approx(2.5));
  REQUIRE(s.spans[0].size() == 3);
  CHECK(s.spans[0][1].rate == Approx(0.5));
  // Links wide enough for both: nobody is slowed.
  const FluidShare wide = fluid_share({{0, 2, 1, {{0, 2.0}}}, {1, 0.5, 1, {{0, 2.0}}}});
  CHECK_FALSE(wide.slowed);
  CHECK(wide.end[0] == Approx(2.0));
  CHECK(wide.end[1] == Approx(1.5));
}
