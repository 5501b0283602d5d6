// Executes lowered collective phases as SimGrid flows from the calling actor.
#ifndef TRIDENT_ENGINE_PHASE_RUNNER_H_
#define TRIDENT_ENGINE_PHASE_RUNNER_H_

#include <cstdint>
#include <vector>

#include "engine/collective_lowering.h"
#include "platform/platform.h"

namespace trident {

// Runs `phases` in order from the current actor: each phase's flows start together (bytes
// divided by the route's protocol efficiency) and the phase ends when all have arrived; a
// collapsed phase then waits (steps - 1) route latencies. Adds the SimGrid activities it
// created to *activities when non-null. Requires a running SimGrid actor.
void run_phases(const Platform& platform, const std::vector<Phase>& phases,
                std::uint64_t* activities);

// Starts and waits for one flow per (src, dst) pair of `bytes` each, all at once.
void run_flows(const Platform& platform, const std::vector<Flow>& flows, std::uint64_t* activities);

}  // namespace trident

#endif  // TRIDENT_ENGINE_PHASE_RUNNER_H_
