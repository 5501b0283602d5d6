// What a simulated step did: per simulated actor (one GPU, or one tensor-parallel group whose
// GPUs do identical work), its time split by activity, and the intervals it spent on each.
// Plain data; no SimGrid.
#ifndef TRIDENT_ENGINE_TIMELINE_H_
#define TRIDENT_ENGINE_TIMELINE_H_

#include <cstdint>
#include <vector>

namespace trident {

enum class IntervalKind : std::uint8_t {
  kForward,    // forward pass of a micro-batch (compute, with fused TP all-reduces)
  kBackward,   // backward pass of a micro-batch
  kOptimizer,  // optimizer step
  kTpComm,     // tensor-parallel collective the GPU waits for (when not fused)
  kPpWait,     // waiting for a pipeline neighbour to produce (bubble)
  kPpComm,     // point-to-point transfer of activations or gradients
  kDpComm,     // data-parallel gradient reduction (or the wait for its buckets)
};

struct Interval {
  double start = 0;
  double end = 0;
  IntervalKind kind = IntervalKind::kForward;
  std::int32_t microbatch = -1;
  std::int16_t chunk = 0;    // model chunk (virtual stage on this GPU) of a pass or transfer
  std::int32_t bucket = -1;  // kDpComm: gradient bucket; -1 for the step's whole reduction
};

struct ActorTimeline {
  int stage = 0;
  int data_rank = 0;
  int tensor_rank = -1;  // -1: the actor stands for its whole TP group
  int gpus = 1;          // GPUs this actor stands for
  double compute_s = 0;  // compute-busy time (including compute overlapped with TP comm)
  double tp_exposed_s = 0;
  double pp_exposed_s = 0;
  double dp_exposed_s = 0;
  double pp_wait_s = 0;  // waiting on pipeline neighbours inside the step
  double end_s = 0;      // when this actor finished its step
  std::vector<Interval> intervals;
};

struct Timeline {
  double step_time_s = 0;
  std::uint64_t activities = 0;  // SimGrid activities (execs, flows, sleeps) executed
  std::vector<ActorTimeline> actors;
};

}  // namespace trident

#endif  // TRIDENT_ENGINE_TIMELINE_H_
