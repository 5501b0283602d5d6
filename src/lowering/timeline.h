// What a simulated step did: the shortcuts it took; per simulated actor (one GPU, or one
// tensor-parallel group whose GPUs do identical work), its time split by activity, and the
// intervals it spent on each, with what the engine ran in them (collective, bytes, layer), so
// that reports format them without re-deriving them. Plain data; no SimGrid.
#ifndef TRIDENT_LOWERING_TIMELINE_H_
#define TRIDENT_LOWERING_TIMELINE_H_

#include <cstdint>
#include <vector>

#include "core/collective_op.h"
#include "lowering/shortcuts.h"
#include "workload/stage_work.h"  // kLayer* values

namespace trident {

// The trace-size budget the engine records under by default: past this many closed-form TP
// intervals (those of fused passes), only data-parallel rank 0's are recorded.
constexpr long kTraceClosedFormBudget = 250000;

enum class IntervalKind : std::uint8_t {
  kForward,        // forward pass of a micro-batch (compute, with fused TP all-reduces)
  kBackward,       // backward pass of a micro-batch
  kOptimizer,      // optimizer step
  kTpComm,         // tensor-parallel collective: simulated, or its closed-form time in a fused pass
  kPpWait,         // waiting for a pipeline neighbour to produce (bubble)
  kPpComm,         // point-to-point transfer of activations or gradients
  kDpComm,         // data-parallel gradient reduction (or the wait for its buckets)
  kCpComm,         // context-parallel ring step: K/V (dK/dV) to the next CP rank, beside an
                   // attention block of the same pass
  kEpComm,         // expert-parallel collective of a MoE layer (dispatch or combine), simulated;
                   // also the expert-data-parallel gradient reduction (bucket -1, layer unknown)
  kHostOptimizer,  // optimizer CPU offload: the GPU waits on its gradients' copy to the host,
                   // the CPU's step or the weights' copy back (bytes: both copies)
};

// How the TP collectives of a pass ran and were recorded (passes), or how one was (kTpComm).
enum class TpTiming : std::uint8_t {
  kNone,        // no TP collective (t = 1), or not a pass nor a TP collective
  kSimulated,   // simulated flows; each recorded as a kTpComm interval before its pass
  kClosedForm,  // fused into the pass; each recorded as a kTpComm interval where the engine's
                // closed form put it (island_collective_time), before its pass
  kClosedFormUnrecorded,  // fused, not recorded: beyond SimOptions::max_closed_form_intervals
                          // only data-parallel rank 0's are
};

struct Interval {
  double start = 0;
  double end = 0;
  IntervalKind kind = IntervalKind::kForward;
  TpTiming tp = TpTiming::kNone;               // passes and kTpComm
  CollectiveOp op = CollectiveOp::kAllReduce;  // kTpComm, kDpComm, kEpComm: the collective
  bool bucket_wait = false;      // kDpComm: waiting for the buckets launched during backward
  std::int16_t chunk = 0;        // model chunk (virtual stage on this GPU) of a pass or transfer
  std::int32_t microbatch = -1;  // passes, transfers; kTpComm: its pass's
  std::int32_t bucket = -1;      // kDpComm: gradient bucket; -1 for the step's whole reduction
  std::int32_t layer = kLayerUnknown;  // kTpComm, kCpComm, kEpComm: the layer, or a kLayer* value
  // kTpComm, kDpComm: buffer per GPU as launched; kEpComm: mean bytes each GPU sends;
  // kPpComm, kCpComm: bytes per GPU.
  double bytes = 0;
  // kPpWait, kPpComm: the pipeline neighbour (stage, chunk) waited for or received from, and
  // whether what arrives is the activation gradient (from the next virtual stage).
  std::int16_t peer_stage = -1;
  std::int16_t peer_chunk = -1;
  bool gradient = false;
};

struct ActorTimeline {
  int stage = 0;
  int data_rank = 0;
  int context_rank = 0;
  int tensor_rank = -1;      // -1: the actor stands for its whole TP group
  int gpus = 1;              // GPUs this actor stands for
  std::vector<int> gpu_ids;  // the GPUs it ran: its own, or its TP group's
  double compute_s = 0;      // compute-busy time (including compute overlapped with TP comm)
  double tp_exposed_s = 0;
  double pp_exposed_s = 0;
  double dp_exposed_s = 0;
  // Of dp_exposed_s, the waits for parameter all-gathers running behind the compute
  // (overlap_param_gather buckets, optim_grads_params per-layer gathers).
  double param_gather_exposed_s = 0;
  double cp_exposed_s = 0;  // context-parallel ring transfers the attention blocks did not hide
  double ep_exposed_s = 0;  // MoE dispatch and combine not hidden behind compute
  double pp_wait_s = 0;     // waiting on pipeline neighbours inside the step
  // Optimizer CPU offload: the optimizer step's wait on the host (copies and CPU step the GPU's
  // own share of the step did not hide).
  double offload_exposed_s = 0;
  double end_s = 0;  // when this actor finished its step
  std::vector<Interval> intervals;
};

struct Timeline {
  Shortcuts shortcuts;  // what the engine decided to shortcut, and why
  double step_time_s = 0;
  std::uint64_t activities = 0;  // SimGrid activities (execs, flows, sleeps) executed
  std::vector<ActorTimeline> actors;
};

}  // namespace trident

#endif  // TRIDENT_LOWERING_TIMELINE_H_
