// Executes lowered collective phases as SimGrid flows from the calling actor.
#ifndef TRIDENT_ENGINE_PHASE_RUNNER_H_
#define TRIDENT_ENGINE_PHASE_RUNNER_H_

#include <cstdint>
#include <vector>

#include "engine/collective_lowering.h"
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

}  // namespace trident

#endif  // TRIDENT_ENGINE_PHASE_RUNNER_H_
