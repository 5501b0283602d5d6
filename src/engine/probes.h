// Micro-simulations of single transfers and collectives on a cluster's platform, for
// calibration and tests. Each call runs its own SimGrid engine: at most one call per process
// (use run_isolated from core/isolated_run.h for more).
#ifndef TRIDENT_ENGINE_PROBES_H_
#define TRIDENT_ENGINE_PROBES_H_

#include <vector>

#include "config/cluster.h"
#include "lowering/collective_lowering.h"

namespace trident {

// Returns the simulated seconds to move `bytes` from GPU `src` to GPU `dst`.
double probe_transfer_time(const ClusterSpec& cluster, int src, int dst, double bytes);

// Returns the simulated seconds of `op` on `bytes` per GPU over each group in `groups` (run
// side by side), lowered as the engine lowers it (`collapse_steps` false: every ring step;
// an all-to-all is one phase, lowering/all_to_all.h).
double probe_collective_time(const ClusterSpec& cluster, CollectiveOp op,
                             const std::vector<std::vector<int>>& groups, double bytes,
                             bool collapse_steps);

// Returns the simulated seconds of each entry of `series` (the phases of one collective each,
// over GPUs [0, gpus)), run one after another on one platform of `gpus` GPUs.
std::vector<double> probe_phase_series(const ClusterSpec& cluster, int gpus,
                                       const std::vector<std::vector<Phase>>& series);

// When two runs of phases that share links end (claimed_runs, lowering/link_claims.h).
struct ClaimProbe {
  double first_end = 0;   // the claimed (or plain) run of `first`, from time 0
  double second_end = 0;  // `second`, started `delay` seconds in
  double third_end = 0;   // `third`, when given
  double alone_s = 0;     // alone_schedule's duration of `first` (-1: its flows share links)
  long interruptions = 0;
  long shared = 0;  // pairs of claims timed together
};

// Runs `first` from time 0 (as a claim when `claimed`, the way the engine's claimed runs do:
// one wait, and what is left as flows once interrupted; else with run_phases), from `delay`
// on `second` (as a claim too when `second_claimed`, else with run_phases) and, when not
// empty, from `third_delay` on `third` (likewise, with `third_claimed`), each from its own
// actor, on GPUs [0, gpus).
ClaimProbe probe_claim(const ClusterSpec& cluster, int gpus, const std::vector<Phase>& first,
                       const std::vector<Phase>& second, double delay, bool claimed,
                       bool second_claimed = false, const std::vector<Phase>& third = {},
                       double third_delay = 0, bool third_claimed = false);

}  // namespace trident

#endif  // TRIDENT_ENGINE_PROBES_H_
