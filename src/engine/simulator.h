// Runs one training step on SimGrid: one actor per simulated GPU (or per tensor-parallel group,
// whose GPUs do identical work) executes its stage's program; pipeline transfers and
// collectives become flows on the platform, so traffic that shares a link shares bandwidth.
#ifndef TRIDENT_ENGINE_SIMULATOR_H_
#define TRIDENT_ENGINE_SIMULATOR_H_

#include <vector>

#include "config/scenario.h"
#include "engine/timeline.h"
#include "schedule/program.h"
#include "workload/stage_work.h"

namespace trident {

enum class Fidelity {
  // One actor per tensor-parallel group (its GPUs run identical programs); its collectives and
  // transfers still move every GPU's bytes. TP all-reduces with no competing traffic are timed
  // in closed form and fused with the surrounding compute; ring steps are collapsed into one
  // flow per edge.
  kFast,
  // One actor per GPU; every collective is simulated ring step by ring step. For validation.
  kFull,
};

const char* fidelity_name(Fidelity f);
bool parse_fidelity(const std::string& name, Fidelity* out);

struct SimOptions {
  Fidelity fidelity = Fidelity::kFast;
  bool record_intervals = true;
};

// Simulates one step of `scenario` with the given per-stage work and programs.
// SimGrid allows one engine per process: call at most once per process (fork for more).
// Throws SimulationError if the step deadlocks or an engine invariant breaks.
Timeline simulate_step(const Scenario& scenario, const Workload& workload,
                       const std::vector<StageProgram>& programs, const SimOptions& options);

}  // namespace trident

#endif  // TRIDENT_ENGINE_SIMULATOR_H_
