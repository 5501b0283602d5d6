// Runs one training step on SimGrid: one actor per simulated GPU (or per tensor-parallel group,
// whose GPUs do identical work) executes its stage's program; pipeline transfers and
// collectives become flows on the platform, so traffic that shares a link shares bandwidth.
#ifndef TRIDENT_ENGINE_SIMULATOR_H_
#define TRIDENT_ENGINE_SIMULATOR_H_

#include <vector>

#include "config/scenario.h"
#include "layout/program.h"
#include "lowering/shortcuts.h"
#include "lowering/timeline.h"
#include "workload/stage_work.h"

namespace trident {

struct SimOptions {
  Fidelity fidelity = Fidelity::kFast;
  bool record_intervals = true;
  // The trace-size budget: when recording would give more closed-form TP intervals (those of
  // fused passes) than this, only data-parallel rank 0's are recorded (the others are copies).
  long max_closed_form_intervals = kTraceClosedFormBudget;
};

// Simulates one step of `scenario` with the given per-stage work and programs, taking the
// shortcuts decide_shortcuts(scenario, options.fidelity) gives (returned in the Timeline).
// SimGrid allows one engine per process: call at most once per process (fork for more).
// Throws SimulationError if the step deadlocks or an engine invariant breaks.
Timeline simulate_step(const Scenario& scenario, const Workload& workload,
                       const std::vector<StageProgram>& programs, const SimOptions& options);

}  // namespace trident

#endif  // TRIDENT_ENGINE_SIMULATOR_H_
