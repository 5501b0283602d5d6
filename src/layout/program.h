// Pipeline schedules: for each stage, the ordered instructions every GPU of that stage runs.
// All GPUs of a stage (every tensor- and data-parallel rank) run the same program, so the
// schedule is built once per stage, not once per GPU.
#ifndef TRIDENT_LAYOUT_PROGRAM_H_
#define TRIDENT_LAYOUT_PROGRAM_H_

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
  kDpGradReduce,    // reduce this stage's gradients over the data-parallel group: all-reduce,
                    // or reduce-scatter under the distributed optimizer; with
                    // overlap_grad_reduce, wait for the buckets launched during backward
  kOptimizer,       // optimizer step on this GPU's parameters (its 1/d shard, distributed)
  kDpParamGather,   // distributed optimizer: all-gather the updated weights (not with
                    // overlap_param_gather, whose gathers run behind the next forward, nor
                    // optim_grads_params, which gathers each layer where it is used)
};

const char* instr_kind_name(InstrKind kind);

struct Instr {
  InstrKind kind;
  int microbatch = -1;  // -1 for per-step instructions
  int chunk = 0;        // model chunk (virtual stage index on this GPU), interleaved schedules
  // kForward under overlap_moe_expert_parallel_comm: runs as one combined step with the
  // kBackward that follows it (Megatron-Core's combined 1F1B).
  bool with_next = false;
};

// A (stage, chunk) pair: virtual stage chunk * p + stage of the model.
struct StageChunk {
  int stage = 0;
  int chunk = 0;
};

// Returns where chunk `chunk` of stage `stage` sends activations (and receives gradients from):
// the next virtual stage. Requires it not to be the model's last.
StageChunk next_virtual_stage(int stage, int chunk, int stages);
// Returns the previous virtual stage. Requires it not to be the model's first.
StageChunk previous_virtual_stage(int stage, int chunk, int stages);

struct StageProgram {
  int stage = 0;
  std::vector<Instr> instrs;
};

// Returns one program per pipeline stage for `plan` (requires a validated plan). Each chunk
// receives and sends in micro-batch order, so a channel per (stage, chunk, direction) is FIFO.
// gpipe: all forwards, then all backwards. 1f1b: p-1-s warm-up forwards, then alternate.
// interleaved-1f1b: Megatron-LM's interleaved order over v chunks (m a multiple of p).
// overlap_moe_expert_parallel_comm (1f1b with p = 1, or interleaved): one more warm-up forward,
// and each steady-state forward combined with its backward: both receives first, then the
// combined step (Instr::with_next), then both sends (Megatron-Core's combined_1f1b.py and
// schedules.py).
std::vector<StageProgram> build_programs(const PlanSpec& plan);

// Returns the ideal bubble fraction (bubble / step time) of the schedule with free
// communication and uniform stages: (p-1)/(m+p-1) for gpipe and 1f1b, (p-1)/(v*m+p-1) for
// interleaved-1f1b.
double ideal_bubble_fraction(const PlanSpec& plan);

}  // namespace trident

#endif  // TRIDENT_LAYOUT_PROGRAM_H_
