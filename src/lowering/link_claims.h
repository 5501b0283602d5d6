// What the engine knows of the links' use: flows in flight (their end unknown) and claims,
// windows of link use an actor timed in closed form (pure bookkeeping, no SimGrid).
//
// A claim stays exact while no flow and no other claim shares one of its links during one of
// its windows: the fluid max-min model gives a flow alone on its route the route's bandwidth
// from the end of its latency on, so its arrival is latency + size / bandwidth. Claims whose
// overlaps are between flows that have an id (alone in their group) are timed together in
// closed form instead: two by max-min between two flows, more by a fluid max-min solve over
// the flows that meet (lowering/fluid_share.h; LinkClaims::try_claim), each run slowed where
// they share. A flow in flight on a link whose window has not begun does not touch
// the claim until it does: the claim is checked when that window begins (LinkClaims::check)
// and stands if the flow has arrived by then. Whatever else would break it (a flow in flight
// on a claimed link while the claim's window there is open, or any other overlap of claims)
// interrupts the claim at that instant, and the claims timed with it; their actors then run
// what is left as flows (engine/claimed_runs.cc).
#ifndef TRIDENT_LOWERING_LINK_CLAIMS_H_
#define TRIDENT_LOWERING_LINK_CLAIMS_H_

#include <functional>
#include <limits>
#include <vector>

namespace trident {

// One link used over [start, end) (simulated seconds) by one flow of a claim.
struct LinkUse {
  int link = 0;
  double start = 0;
  double end = 0;
  // The flow, for claims that share it (-1: it may not be slowed, e.g. a GEMM runs beside it
  // or its group has other flows): the index of its first use in Claim::uses; all its uses
  // carry the same times.
  int flow = -1;
  double bw_start = 0;   // when its latency ends: it moves bytes over [bw_start, end)
  double rate = 0;       // its rate alone (the route's bandwidth)
  double capacity = 0;   // this link's bandwidth
  double group_end = 0;  // when its group ends (its arrival or, later, the group's floor)
  // Its arrival and its group's end in the run's alone time (set by LinkClaims::try_claim).
  double alone_end = 0, alone_group_end = 0;
};

// Where a claimed run goes slower than alone: real time [r0, r1) runs alone time [a0, a1).
struct Warp {
  double r0 = 0, r1 = 0, a0 = 0, a1 = 0;
  bool floor = false;  // a group's floor after a slowed flow (its arrival moved to r0)
};

// One actor's closed-form run of flows. Times in `uses` are real; the actor plans in its run's
// alone time, which `warps` map to real time. `wake` is called (from another actor) when the
// claim is interrupted (`interrupted_at` then holds the instant) or revised (`revisions`
// counts up; its end moved later, or its `check_at` earlier).
struct Claim {
  std::vector<LinkUse> uses;
  std::vector<Warp> warps;  // in time order, disjoint
  std::function<void()> wake;
  double interrupted_at = -1;
  // When to call LinkClaims::check (real time; infinity: never): no later than the first start
  // of a window on a link that carried a flow in flight when the claim last looked.
  double check_at = std::numeric_limits<double>::infinity();
  long revisions = 0;
  bool registered = false;
  // Claims timed together with this one: a flow of each shares links until `until`.
  struct Partner {
    Claim* other = nullptr;
    int flow = -1, other_flow = -1;
    double until = 0;
  };
  std::vector<Partner> partners;

  // Returns the alone time at real time `real`, and the inverse.
  double to_alone(double real) const;
  double to_real(double alone) const;
  // Returns true when its flow `flow` is timed with `other`'s flow `other_flow`.
  bool timed_with(int flow, const Claim* other, int other_flow) const;
};

class LinkClaims {
 public:
  // `links`: the platform's link count (ids in [0, links)).
  explicit LinkClaims(int links = 0) : in_flight_(links, 0), claims_(links) {}

  // Counts flows now in flight on `links`; interrupts every claim with a window on one of them
  // open at `now`, and has a claim whose window on one of them opens later check then (its
  // check_at moves earlier and it is woken).
  void begin_flow(const std::vector<int>& links, double now);
  // The flows counted by begin_flow on `links` have arrived. Requires a matching begin_flow.
  void end_flow(const std::vector<int>& links);

  // Registers *c (its uses set in alone time, from `now`; warps, partners and interrupted_at
  // reset) and returns true when no link carries a flow in flight while c's window on it is
  // open at `now` (one that opens later is checked then: check_at) and either no
  // other claim's window overlaps one of its windows on the same link, or every overlap is
  // between flows with ids that can be timed together (share, then share_group) without
  // moving a flow timed with another claim or delaying a run into a further claim. Then the
  // runs are retimed: from when the flows move bytes they share their links max-min fairly
  // (each bounded by its rate alone), and every later window of each run moves by its delay.
  // The claims retimed are woken to wait for their new ends. Otherwise returns false, leaving
  // *c unregistered and the others as they were (its actor runs flows, whose begin_flow
  // interrupts the claims they meet).
  bool try_claim(Claim* c, double now);
  // Interrupts *c (registered) at `now` when a flow is in flight on a link one of its windows
  // holds open at `now`; else sets c->check_at to the next start of a window on a link that
  // carries a flow in flight (infinity when none). Its actor calls this at c->check_at.
  void check(Claim* c, double now);
  // Unregisters *c (a no-op when it was interrupted or never registered).
  void release(Claim* c);

  // Claims interrupted, and pairs of claims timed together, so far (for statistics and tests).
  long interruptions() const { return interruptions_; }
  long shared() const { return shared_; }

 private:
  // Interrupts *c and the partners it still shares a flow with.
  void interrupt(Claim* c, double now);
  void unregister(Claim* c);
  void register_claim(Claim* c);
  // Sets c->check_at: the first start after `now` of a window on a link with a flow in flight.
  void next_check(Claim* c, double now) const;
  // True when a window of `uses` (a's, retimed) overlaps one of a registered claim other than
  // `a` and `b` that is not timed with it.
  bool overlaps_others(const std::vector<LinkUse>& uses, const Claim* a, const Claim* b) const;
  // Times c's flow fc and o's flow fo together (retiming both claims) when neither is shared
  // already or moved by the retime, and o's retimed windows overlap no further claim; else
  // returns false, having changed nothing.
  bool share(Claim* c, int fc, Claim* o, int fo, double now);
  // Times c's flow fc, o's flow fo and every flow timed with either that still moves bytes
  // when they meet, all together (fluid_share.h), one flow per claim: retimes each claim and
  // returns true when none of them is delayed into a further claim or moves a flow timed with
  // another; else returns false, the claims it changed saved in saved_ for try_claim to put
  // back.
  bool share_group(Claim* c, int fc, Claim* o, int fo, double now);
  // Keeps *k as it is, once per try_claim, to be put back if the claim is refused.
  void save(Claim* k);

  std::vector<int> in_flight_;
  // The claims try_claim retimed, and each as it was before (its uses, warps and partners).
  std::vector<Claim*> retimed_;
  std::vector<Claim> saved_;
  std::vector<std::vector<Claim*>> claims_;  // registered claims with a use of each link
  long interruptions_ = 0;
  long shared_ = 0;
};

}  // namespace trident

#endif  // TRIDENT_LOWERING_LINK_CLAIMS_H_
