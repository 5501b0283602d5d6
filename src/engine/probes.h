// Micro-simulations of single transfers and collectives on a cluster's platform, for
// calibration and tests. Each call runs its own SimGrid engine: at most one call per process
// (use run_isolated from core/isolated_run.h for more).
#ifndef TRIDENT_ENGINE_PROBES_H_
#define TRIDENT_ENGINE_PROBES_H_

#include <vector>

#include "config/cluster.h"
#include "engine/collective_lowering.h"

namespace trident {

// Returns the simulated seconds to move `bytes` from GPU `src` to GPU `dst`.
double probe_transfer_time(const ClusterSpec& cluster, int src, int dst, double bytes);

// Returns the simulated seconds of `op` on `bytes` per GPU over each group in `groups` (run
// side by side), lowered as the engine lowers it (`collapse_steps` false: every ring step;
// an all-to-all is one phase, engine/all_to_all.h).
double probe_collective_time(const ClusterSpec& cluster, CollectiveOp op,
                             const std::vector<std::vector<int>>& groups, double bytes,
                             bool collapse_steps);

// Returns the simulated seconds of each entry of `series` (the phases of one collective each,
// over GPUs [0, gpus)), run one after another on one platform of `gpus` GPUs.
std::vector<double> probe_phase_series(const ClusterSpec& cluster, int gpus,
                                       const std::vector<std::vector<Phase>>& series);

}  // namespace trident

#endif  // TRIDENT_ENGINE_PROBES_H_
