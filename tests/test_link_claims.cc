// The links' bookkeeping of claimed runs (platform/link_claims): a flow in flight refuses a
// claim, a flow that starts interrupts the claims whose windows on its links are still open,
// and claims whose windows on a link do not overlap coexist.
#include <catch2/catch.hpp>

#include "platform/link_claims.h"

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

TEST_CASE("link claims: a flow in flight refuses a claim until it ends", "[link_claims]") {
  LinkClaims links(4);
  links.begin_flow({1, 2}, 0.0);
  Counted c({{2, 0.5, 1.0}});
  CHECK_FALSE(links.try_claim(&c.claim, 0.5));
  CHECK_FALSE(c.claim.registered);
  links.end_flow({1, 2});
  CHECK(links.try_claim(&c.claim, 0.5));
  CHECK(c.claim.registered);
  // A window that has ended by now does not count against a flow in flight.
  Counted past({{3, 0.0, 1.0}});
  links.begin_flow({3}, 2.0);
  CHECK(links.try_claim(&past.claim, 2.0));
}

TEST_CASE("link claims: a new flow interrupts the claims still open on its links",
          "[link_claims]") {
  LinkClaims links(4);
  Counted open({{0, 1.0, 2.0}, {1, 1.0, 2.0}});
  Counted ended({{0, 0.0, 0.5}, {2, 3.0, 4.0}});
  Counted elsewhere({{3, 0.0, 9.0}});
  REQUIRE(links.try_claim(&open.claim, 0.0));
  REQUIRE(links.try_claim(&ended.claim, 0.0));
  REQUIRE(links.try_claim(&elsewhere.claim, 0.0));
  links.begin_flow({0}, 0.75);
  // Its window on link 0 is yet to come: the flow may still be there then.
  CHECK(open.woken == 1);
  CHECK(open.claim.interrupted_at == 0.75);
  CHECK_FALSE(open.claim.registered);
  CHECK(ended.woken == 0);  // its window on link 0 ended at 0.5
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
