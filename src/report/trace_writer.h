// Chrome trace-event JSON of a simulated step, for Perfetto (ui.perfetto.dev) and
// chrome://tracing. Pure; no SimGrid.
//
// Layout: one process per node ("node 3"); per simulated actor, a "compute" track (forward and
// backward passes, optimizer, "wait (bubble)"), a "comm" track (what the GPU waits on from the
// network: TP collectives per layer, pipeline transfers it receives, data-parallel reduction)
// and, for stages that send, a "send" track (the transfers it sources; the receiver runs them).
// Where overlapping intervals would share a track (the engine may overlap communication), the
// later ones go to extra numbered tracks, so intervals on one track never overlap. In fast
// fidelity one actor stands for its whole TP group: its tracks are named after every GPU of the
// group ("GPUs 8-15 (TP group, simulated once)"), not copied per GPU. TP collectives fused into
// a pass in closed form are laid out on the comm track from the closed-form schedule of the pass
// and marked so in their args.
//
// Timestamps are microseconds with nanosecond resolution. Output depends only on the inputs.
#ifndef TRIDENT_REPORT_TRACE_WRITER_H_
#define TRIDENT_REPORT_TRACE_WRITER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "config/scenario.h"
#include "layout/program.h"
#include "lowering/timeline.h"
#include "report/step_events.h"
#include "workload/stage_work.h"

namespace trident {

// Returns the trace of `timeline` (simulated on `workload`, with intervals recorded) as one
// JSON object {"displayTimeUnit", "otherData", "traceEvents"}, ending with a newline.
std::string format_trace(const Scenario& scenario, const Workload& workload,
                         const Timeline& timeline);

// Writes the same trace as format_trace piece by piece to `sink` (a file, without holding the
// whole text). Exceptions from `sink` propagate.
void write_trace(const Scenario& scenario, const Workload& workload, const Timeline& timeline,
                 const std::function<void(const std::string&)>& sink);

// Returns an estimate of the trace's size in bytes before simulating: the passes, transfers and
// per-layer TP collectives of `programs` for every actor the shortcut record `shortcuts` says
// the engine simulates (its replicas_simulated data-parallel replicas, each context rank; one
// actor per GPU without group_actor, else one per TP group), at 150 bytes an event. Real
// traces run 1.5-2 times larger (metadata, args); the estimate is meant as a lower bound to
// refuse hopeless traces early.
std::int64_t estimate_trace_bytes(const Scenario& scenario,
                                  const std::vector<StageProgram>& programs,
                                  const Shortcuts& shortcuts);

// Returns how a list of GPUs is named in the trace: "GPU 5", "GPUs 8-15", "GPUs 0,8,16,24".
std::string gpu_list_name(const std::vector<int>& gpus);

}  // namespace trident

#endif  // TRIDENT_REPORT_TRACE_WRITER_H_
