// The links' bookkeeping of claimed runs (lowering/link_claims): a flow in flight refuses a
// claim whose window on its link is open and has one that opens later checked then, a flow
// that starts interrupts the claims whose windows on its links are open, and claims whose
// windows on a link do not overlap coexist.
#include <catch2/catch.hpp>
#include <limits>

#include "lowering/link_claims.h"

using namespace trident;

namespace {

// A claim that counts its wake-ups.
struct Counted {
  Claim claim;
  int woken = 0;
  explicit Counted(std::vector<LinkUse> uses) {
    claim.uses = std::move(uses);
    claim.wake = [this]() { ++woken; };
  }
};

}  // namespace

TEST_CASE("link claims: a flow in flight refuses a claim whose window on its link is open",
          "[link_claims]") {
  LinkClaims links(4);
  links.begin_flow({1, 2}, 0.0);
  Counted c({{2, 0.5, 1.0}});
  CHECK_FALSE(links.try_claim(&c.claim, 0.5));
  CHECK_FALSE(c.claim.registered);
  links.end_flow({1, 2});
  CHECK(links.try_claim(&c.claim, 0.5));
  CHECK(c.claim.registered);
  CHECK(c.claim.check_at == std::numeric_limits<double>::infinity());
  // A window that has ended by now does not count against a flow in flight.
  Counted past({{3, 0.0, 1.0}});
  links.begin_flow({3}, 2.0);
  CHECK(links.try_claim(&past.claim, 2.0));
}

TEST_CASE("link claims: a window opening later on a busy link is checked when it opens",
          "[link_claims]") {
  LinkClaims links(3);
  links.begin_flow({0}, 0.0);
  // Its windows on link 0 open at 2 and 5: the flow does not touch it before.
  Counted stays({{1, 1.0, 2.0}, {0, 2.0, 3.0}, {0, 5.0, 6.0}});
  Counted stops({{2, 1.0, 2.0}, {0, 4.0, 4.5}});
  REQUIRE(links.try_claim(&stays.claim, 1.0));
  CHECK(stays.claim.check_at == 2.0);
  // Checked before the window opens: nothing to do yet.
  links.check(&stays.claim, 1.5);
  CHECK(stays.claim.registered);
  CHECK(stays.claim.check_at == 2.0);
  links.end_flow({0});
  // The flow arrived before the window opened: the claim stands, with nothing left to check.
  links.check(&stays.claim, 2.0);
  CHECK(stays.claim.registered);
  CHECK(stays.claim.interrupted_at == -1);
  CHECK(stays.claim.check_at == std::numeric_limits<double>::infinity());
  // Another flow starts on link 0 between stays's windows there: stays checks again at 5,
  // woken to wait for that, and `stops` (link 0 from 4) at 4.
  links.begin_flow({0}, 3.5);
  REQUIRE(links.try_claim(&stops.claim, 3.5));
  CHECK(stops.claim.check_at == 4.0);
  CHECK(stays.woken == 1);
  CHECK(stays.claim.check_at == 5.0);
  CHECK(stays.claim.registered);
  // Still in flight when stops's window opens: stops is interrupted there.
  links.check(&stops.claim, 4.0);
  CHECK_FALSE(stops.claim.registered);
  CHECK(stops.claim.interrupted_at == 4.0);
  CHECK(stops.woken == 1);
  CHECK(links.interruptions() == 1);
}

TEST_CASE("link claims: a new flow interrupts the claims open on its links", "[link_claims]") {
  LinkClaims links(4);
  Counted open({{0, 0.5, 2.0}, {1, 1.0, 2.0}});
  Counted later({{2, 1.0, 2.0}, {0, 2.0, 3.0}});
  Counted ended({{0, 0.0, 0.25}, {2, 3.0, 4.0}});
  Counted elsewhere({{3, 0.0, 9.0}});
  REQUIRE(links.try_claim(&open.claim, 0.0));
  REQUIRE(links.try_claim(&ended.claim, 0.0));
  REQUIRE(links.try_claim(&elsewhere.claim, 0.0));
  REQUIRE(links.try_claim(&later.claim, 0.25));
  links.begin_flow({0}, 0.75);
  CHECK(open.woken == 1);
  CHECK(open.claim.interrupted_at == 0.75);
  CHECK_FALSE(open.claim.registered);
  // Its window on link 0 is yet to come: woken to check at 2 whether the flow is still there.
  CHECK(later.woken == 1);
  CHECK(later.claim.registered);
  CHECK(later.claim.check_at == 2.0);
  CHECK(ended.woken == 0);  // its window on link 0 ended at 0.25
  CHECK(elsewhere.woken == 0);
  CHECK(links.interruptions() == 1);
  // An interrupted claim is off every link: a flow on its other link finds nothing to wake.
  links.begin_flow({1}, 0.8);
  CHECK(open.woken == 1);
  // A released claim is never woken.
  links.release(&elsewhere.claim);
  links.begin_flow({3}, 1.0);
  CHECK(elsewhere.woken == 0);
}

TEST_CASE("link claims: claims coexist where their windows on a link do not overlap",
          "[link_claims]") {
  LinkClaims links(2);
  Counted first({{0, 0.0, 1.0}, {1, 2.0, 3.0}});
  Counted after({{0, 1.0, 2.0}});   // touches first's window on link 0 at 1.0
  Counted during({{1, 2.5, 2.6}});  // inside first's window on link 1
  REQUIRE(links.try_claim(&first.claim, 0.0));
  CHECK(links.try_claim(&after.claim, 0.0));
  CHECK_FALSE(links.try_claim(&during.claim, 0.0));
  // A refused claim interrupts nobody: the flows its actor starts instead will.
  CHECK(first.woken == 0);
  CHECK(after.woken == 0);
  CHECK(first.claim.registered);
}

TEST_CASE("link claims: two flows sharing one link are timed together by max-min",
          "[link_claims]") {
  LinkClaims links(4);
  // x moves 1 unit at rate 1 over [0, 1) on links 0 and 1, then its next flow holds link 2
  // over [1.2, 1.4); y moves 1 unit at rate 1 over [0.5, 1.5) on links 0 and 3. Link 0 carries
  // 1: from 0.5 each gets 0.5.
  Counted x({{0, 0.0, 1.0, 0, 0.0, 1.0, 1.0, 1.0},
             {1, 0.0, 1.0, 0, 0.0, 1.0, 1.0, 1.0},
             {2, 1.2, 1.4, 2, 1.2, 1.0, 1.0, 1.4}});
  Counted y({{0, 0.5, 1.5, 0, 0.5, 1.0, 1.0, 1.5}, {3, 0.5, 1.5, 0, 0.5, 1.0, 1.0, 1.5}});
  REQUIRE(links.try_claim(&x.claim, 0.0));
  REQUIRE(links.try_claim(&y.claim, 0.5));
  CHECK(links.shared() == 1);
  // x has 0.5 left at 0.5, at rate 0.5: it arrives at 1.5; y has moved 0.5 by then and moves
  // the rest alone, at rate 1: it arrives at 2.0. x's next flow moves by x's delay, 0.5.
  CHECK(x.claim.uses[0].end == Approx(1.5));
  CHECK(x.claim.uses[2].start == Approx(1.7));
  CHECK(x.claim.uses[2].end == Approx(1.9));
  CHECK(y.claim.uses[0].end == Approx(2.0));
  CHECK(x.woken == 1);  // to wait for its new end
  CHECK(x.claim.revisions == 1);
  CHECK(y.woken == 0);
  // Alone time against real time: x's arrival (alone 1.0) is at 1.5, y's (alone 1.5) at 2.0;
  // halfway through sharing, each has run half as fast as alone.
  CHECK(x.claim.to_real(1.0) == Approx(1.5));
  CHECK(x.claim.to_real(1.4) == Approx(1.9));
  CHECK(y.claim.to_real(1.5) == Approx(2.0));
  CHECK(x.claim.to_alone(1.0) == Approx(0.75));
  CHECK(y.claim.to_alone(1.0) == Approx(0.75));
  // A third claim on the shared link while they share is timed with both: z moves 0.2 from
  // 1.0, when x has 0.25 left and y 0.75. A third each until z arrives at 1.6; x, with 0.05
  // left, at 1.7 (half each); y alone from there, at 2.2. x's next flow moves by 0.2 more.
  Counted z({{0, 1.0, 1.2, 0, 1.0, 1.0, 1.0, 1.2}});
  REQUIRE(links.try_claim(&z.claim, 1.0));
  CHECK(z.claim.uses[0].end == Approx(1.6));
  CHECK(x.claim.uses[0].end == Approx(1.7));
  CHECK(x.claim.uses[2].start == Approx(1.9));
  CHECK(y.claim.uses[0].end == Approx(2.2));
  CHECK(x.woken == 2);
  CHECK(y.woken == 1);
  CHECK(x.claim.to_real(1.0) == Approx(1.7));
  CHECK(x.claim.to_alone(1.6) == Approx(0.75 + 0.2));
  CHECK(y.claim.to_real(1.5) == Approx(2.2));
  // A flow on x's other link interrupts x and, as they still share, y and z at that instant.
  links.begin_flow({1}, 1.0);
  CHECK(x.claim.interrupted_at == 1.0);
  CHECK(y.claim.interrupted_at == 1.0);
  CHECK(z.claim.interrupted_at == 1.0);
  CHECK(links.interruptions() == 3);
}

TEST_CASE("link claims: a flow capped below its fair share leaves the rest to the other",
          "[link_claims]") {
  LinkClaims links(2);
  // On link 0 of bandwidth 1: x at 0.25 alone (its route's bottleneck elsewhere), y at 1.
  Counted x({{0, 0.0, 4.0, 0, 0.0, 0.25, 1.0, 4.0}});
  Counted y({{0, 0.0, 1.0, 0, 0.0, 1.0, 1.0, 1.0}});
  REQUIRE(links.try_claim(&x.claim, 0.0));
  REQUIRE(links.try_claim(&y.claim, 0.0));
  // x keeps 0.25, y gets 0.75: y arrives at 4/3, x on time.
  CHECK(y.claim.uses[0].end == Approx(4.0 / 3));
  CHECK(x.claim.uses[0].end == Approx(4.0));
  CHECK(x.woken == 0);
}
