// What the engine knows of the links' use: flows in flight (their end unknown) and claims,
// windows of link use an actor timed in closed form because nothing else uses those links
// then (pure bookkeeping, no SimGrid).
//
// A claim stays exact while no flow and no other claim shares one of its links during one of
// its windows: the fluid max-min model gives a flow alone on its route the route's bandwidth
// from the end of its latency on, so its arrival is latency + size / bandwidth. Whatever
// would break that (a flow starting on a claimed link before the claim's window there ends,
// or another claim overlapping it) interrupts the claim at that instant; its actor then runs
// what is left of it as flows (engine/claimed_runs.h).
#ifndef TRIDENT_PLATFORM_LINK_CLAIMS_H_
#define TRIDENT_PLATFORM_LINK_CLAIMS_H_

#include <functional>
#include <vector>

namespace trident {

// One link used over [start, end) (simulated seconds).
struct LinkUse {
  int link = 0;
  double start = 0;
  double end = 0;
};

// One actor's closed-form run of flows. `wake` is called (from another actor) when the claim
// is interrupted; `interrupted_at` then holds the instant.
struct Claim {
  std::vector<LinkUse> uses;
  std::function<void()> wake;
  double interrupted_at = -1;
  bool registered = false;
};

class LinkClaims {
 public:
  // `links`: the platform's link count (ids in [0, links)).
  explicit LinkClaims(int links = 0) : in_flight_(links, 0), claims_(links) {}

  // Counts flows now in flight on `links`; interrupts every claim with a window on one of them
  // that has not ended by `now`.
  void begin_flow(const std::vector<int>& links, double now);
  // The flows counted by begin_flow on `links` have arrived. Requires a matching begin_flow.
  void end_flow(const std::vector<int>& links);

  // Registers *c (its uses set, interrupted_at reset) and returns true when none of its links
  // carries a flow in flight and no other claim's window overlaps one of its windows on the
  // same link; otherwise returns false, leaving *c unregistered (its actor runs flows, whose
  // begin_flow interrupts the claims they meet).
  bool try_claim(Claim* c, double now);
  // Unregisters *c (a no-op when it was interrupted or never registered).
  void release(Claim* c);

  // Claims interrupted so far (for statistics and tests).
  long interruptions() const { return interruptions_; }

 private:
  void interrupt(Claim* c, double now);
  void unregister(Claim* c);

  std::vector<int> in_flight_;
  std::vector<std::vector<Claim*>> claims_;  // registered claims with a use of each link
  long interruptions_ = 0;
};

}  // namespace trident

#endif  // TRIDENT_PLATFORM_LINK_CLAIMS_H_
