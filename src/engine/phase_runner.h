// Executes lowered collective phases as SimGrid flows from the calling actor.
#ifndef TRIDENT_ENGINE_PHASE_RUNNER_H_
#define TRIDENT_ENGINE_PHASE_RUNNER_H_

#include <simgrid/forward.h>

#include <cstdint>
#include <vector>

#include "lowering/collective_lowering.h"
#include "platform/platform.h"

namespace trident {

// Runs `phases` in order from the current actor: each phase's flows start together (bytes
// divided by their efficiency, or the route's) with those of the phases chained to it by
// `with_next`, and the group ends when all have arrived; then waits what the first phase's
// `latency` exceeds route_latencies by. Adds the SimGrid activities it created to *activities when
// non-null. Requires a running SimGrid actor.
void run_phases(const Platform& platform, const std::vector<Phase>& phases,
                std::uint64_t* activities);

// Returns the route latency `phases` incur: per group of side-by-side phases, the largest
// route latency among its flows, summed.
double route_latencies(const Platform& platform, const std::vector<Phase>& phases);

// Starts and waits for one flow per (src, dst) pair of `bytes` each, all at once.
void run_flows(const Platform& platform, const std::vector<Flow>& flows, std::uint64_t* activities);

// A flow of an AloneSchedule, times from the run's start.
struct TimedFlow {
  int src = 0, dst = 0;
  double size = 0;     // bytes SimGrid moves (payload / efficiency, rounded as run_phases does)
  double latency = 0;  // route latency
  double rate = 0;     // the route's bandwidth: the flow is alone on it
  double start = 0, end = 0;
  const std::vector<int>* links = nullptr;
  const std::vector<double>* link_bandwidth = nullptr;
};

// A group of side-by-side phases with flows, times from the run's start.
struct TimedGroup {
  size_t first_phase = 0, end_phase = 0;  // phases [first_phase, end_phase)
  size_t first_flow = 0, end_flow = 0;    // AloneSchedule::flows
  double start = 0, flows_end = 0;
  double floor_end = 0;  // start + the group's floor
};

// What run_phases does when nothing else uses the links its flows take.
struct AloneSchedule {
  std::vector<TimedFlow> flows;
  std::vector<TimedGroup> groups;  // those with flows
  double duration = 0;
  double extra_latency = 0;  // the closing wait beyond the routes' latencies
};

// Returns false when two flows of one group share a link (they would share it, which this
// closed form does not time); else sets *out to the times run_phases(phases) takes when no
// other flow uses its links.
bool alone_schedule(const Platform& platform, const std::vector<Phase>& phases, AloneSchedule* out);

// Runs what is left, `elapsed` seconds of alone time into it, of a run of `phases` timed by
// `schedule` (alone until now, or as `claim`'s warps map alone to real time when non-null): a
// flow in flight goes on as a flow of the bytes it has left, less what its route's latency
// (which the new flow pays again) would have moved at its rate alone; waits end when they
// would have; the rest as run_phases. Requires a running SimGrid actor.
void run_phases_from(const Platform& platform, const std::vector<Phase>& phases,
                     const AloneSchedule& schedule, double elapsed, std::uint64_t* activities,
                     const Claim* claim = nullptr);

// Appends to *uses the windows the flows of `s`, run from `start`, hold their links. A flow
// alone in its group gets a flow id, so that a claim sharing its links may slow it
// (LinkClaims::try_claim); other flows get none. `beside`: seconds of compute that run from
// `start` beside the flows (a weight-gradient GEMM), 0 for none; the run then ends no earlier
// than the GEMM, which the last group's end (LinkUse::group_end) carries, and only a flow of
// that group gets an id.
void add_claim_windows(const AloneSchedule& s, double start, std::vector<LinkUse>* uses,
                       double beside = 0);

// Runs `phases` (alone: their alone_schedule) as a claim from now when their links are free
// (LinkClaims::try_claim with the schedule's windows): one wait, and once interrupted what is
// left as flows (run_phases_from). Returns false, having run nothing, when the links are not
// free. Requires claim->wake to release `wake`, and a running SimGrid actor.
bool run_claimed(const Platform& platform, const std::vector<Phase>& phases,
                 const AloneSchedule& alone, Claim* claim, const simgrid::s4u::SemaphorePtr& wake,
                 std::uint64_t* activities);

// Waits until the real time of alone time `until` (claim->to_real: later each time another
// claim's revises it) or until `claim` (registered) is interrupted; returns the alone time of
// the interruption, or -1 when it ran out. Unregisters the claim either way. Adds its waits
// to *activities when non-null.
double wait_claim(const Platform& platform, Claim* claim, const simgrid::s4u::SemaphorePtr& wake,
                  double until, std::uint64_t* activities);

}  // namespace trident

#endif  // TRIDENT_ENGINE_PHASE_RUNNER_H_
