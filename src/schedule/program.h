// Pipeline schedules: for each stage, the ordered instructions every GPU of that stage runs.
// All GPUs of a stage (every tensor- and data-parallel rank) run the same program, so the
// schedule is built once per stage, not once per GPU.
#ifndef TRIDENT_SCHEDULE_PROGRAM_H_
#define TRIDENT_SCHEDULE_PROGRAM_H_

#include <string>
#include <vector>

#include "config/plan.h"

namespace trident {

enum class InstrKind {
  kRecvActivation,  // wait for micro-batch's activations from stage - 1
  kForward,         // forward pass of one micro-batch through this stage's layers
  kSendActivation,  // hand activations to stage + 1 (asynchronous)
  kRecvGradient,    // wait for the activation gradient from stage + 1
  kBackward,        // backward pass of one micro-batch
  kSendGradient,    // hand the activation gradient to stage - 1 (asynchronous)
  kDpAllReduce,     // all-reduce of this stage's gradients over the data-parallel group
  kOptimizer,       // optimizer step on this GPU's parameters
};

const char* instr_kind_name(InstrKind kind);

struct Instr {
  InstrKind kind;
  int microbatch = -1;  // -1 for per-step instructions
};

struct StageProgram {
  int stage = 0;
  std::vector<Instr> instrs;
};

// Returns one program per pipeline stage for `plan` (gpipe or 1f1b; requires a validated plan).
// Stage s receives from s-1 and sends to s+1 in micro-batch order, so channels are FIFO.
std::vector<StageProgram> build_programs(const PlanSpec& plan);

// Returns the ideal bubble fraction (bubble / step time) of the schedule with free
// communication and uniform stages: (p-1)/(m+p-1) for gpipe and 1f1b.
double ideal_bubble_fraction(const PlanSpec& plan);

}  // namespace trident

#endif  // TRIDENT_SCHEDULE_PROGRAM_H_
