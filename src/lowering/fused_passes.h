// What the engine records for passes whose TP collectives it fused in closed form (pure, no
// SimGrid): each collective where the closed form put it, and how many a program records.
#ifndef TRIDENT_LOWERING_FUSED_PASSES_H_
#define TRIDENT_LOWERING_FUSED_PASSES_H_

#include <vector>

#include "layout/program.h"
#include "lowering/timeline.h"
#include "workload/collective_time.h"
#include "workload/stage_work.h"

namespace trident {

// Appends to *out one kTpComm interval (kClosedForm, with op, bytes and layer) per collective
// of `fused`, the closed form of `pass`, which ran [start, end) for micro-batch `mb`, `chunk`.
// A fused pass runs for exactly its closed form; were it stretched, its collectives would
// stretch with it.
void append_fused_collectives(const Pass& pass, const FusedPass& fused, double start, double end,
                              int mb, int chunk, std::vector<Interval>* out);

// Returns how many closed-form TP collectives one actor running `program` records, given the
// fused forward and backward passes of its stage's chunks.
long fused_collectives(const StageProgram& program, const std::vector<FusedPass>& forward,
                       const std::vector<FusedPass>& backward);

}  // namespace trident

#endif  // TRIDENT_LOWERING_FUSED_PASSES_H_
