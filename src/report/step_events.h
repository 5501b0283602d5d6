// What each recorded interval of a simulated step is: the engine records what it ran (kind,
// times, micro-batch, chunk, and for collectives the op, bytes, layer and bucket, closed-form TP
// collectives where it timed them, each actor's GPUs, each transfer's neighbour); joined with
// the stages' layers, each becomes a StepEvent. Formatting only: nothing here
// re-derives a cost or a decision of the engine. Pure; no SimGrid. Shared by the trace writer
// and its tests.
#ifndef TRIDENT_REPORT_STEP_EVENTS_H_
#define TRIDENT_REPORT_STEP_EVENTS_H_

#include <string>
#include <vector>

#include "core/collective_op.h"
#include "lowering/timeline.h"  // the engine's output, plain data
#include "workload/stage_work.h"

namespace trident {

enum class EventKind {
  kForward,        // forward pass of (micro-batch, chunk)
  kBackward,       // backward pass of (micro-batch, chunk)
  kOptimizer,      // optimizer step
  kBubble,         // waiting for a pipeline neighbour to produce
  kTpCollective,   // a tensor-parallel collective of one layer (simulated or closed form)
  kRecv,           // a pipeline transfer this actor receives (and waits for)
  kSend,           // a pipeline transfer this actor sends (its receiver runs and waits for it)
  kDpCollective,   // data-parallel gradient reduction, a bucket of it, or the weight all-gather
  kCpTransfer,     // a context-parallel ring step's K/V (dK/dV) transfer, beside attention
  kEpCollective,   // a MoE layer's dispatch or combine over the expert-parallel group, or the
                   // expert gradients' reduction over the expert-data-parallel group
  kHostOptimizer,  // optimizer CPU offload: the wait on the host's copies and CPU step
};

// Where an event goes: what the GPU computes (or idles on), what it waits on from the network,
// and what it sends asynchronously.
enum class EventTrack { kCompute, kComm, kSend };
EventTrack event_track(EventKind kind);

// How a pass's tensor-parallel collectives appear in the events.
enum class TpDetail {
  kNone,             // no TP collectives (t = 1)
  kSimulated,        // simulated flows: kTpCollective events with the recorded times
  kClosedForm,       // fused into the pass; kTpCollective events where the engine timed them
  kClosedFormHidden  // fused, and not recorded (the engine's trace-size budget was spent)
};

struct StepEvent {
  double start = 0, end = 0;  // seconds
  EventKind kind = EventKind::kForward;
  int microbatch = -1;  // passes, transfers, bubbles
  int chunk = 0;        // model chunk on this GPU (passes, TP, transfers, bubbles)
  // kRecv, kBubble: the sending (awaited) virtual stage; kSend: the receiving one.
  int peer_stage = -1, peer_chunk = -1;
  bool gradient = false;  // transfers, bubbles: activation gradients (backward), not activations
  // Passes: the chunk's layers. kTpCollective: `first_layer` is the layer (or a kLayer* value).
  int first_layer = -1, num_layers = 0;
  CollectiveOp op = CollectiveOp::kAllReduce;  // collectives
  double bytes = 0;               // collectives: buffer per GPU; transfers: bytes per GPU
  int bucket = -1;                // kDpCollective: gradient bucket, -1 when not bucketed
  bool bucket_wait = false;       // kDpCollective: waiting for the buckets launched during backward
  int tp_collectives = 0;         // passes: TP collectives inside the pass
  TpDetail tp = TpDetail::kNone;  // passes: how those are shown; kTpCollective: kSimulated or
                                  // kClosedForm
};

// The events of one simulated actor (a GPU, or a TP group simulated once), sorted by track,
// then start time.
struct ActorEvents {
  int actor = 0;          // index into Timeline::actors
  std::vector<int> gpus;  // the GPUs it stands for, tensor rank order
  std::vector<StepEvent> events;
};

// Returns the events of every actor of `timeline`, in actor order, from what the engine
// recorded alone (each actor's GPUs, each transfer's and wait's neighbour). Requires the
// timeline to come from simulating `workload` with intervals recorded.
std::vector<ActorEvents> step_events(const Workload& workload, const Timeline& timeline);

// Returns the event's display name: "F mb3", "B mb3 c1" (chunk shown when the plan has
// virtual stages), "AR tp L12", "recv act ← stage 2", "send grad → stage 1", "AR dp bucket 2",
// "RS dp", "optimizer", "wait (bubble)".
std::string event_name(const StepEvent& event, int virtual_stages);

// Returns "AR", "RS" or "AG".
const char* collective_abbrev(CollectiveOp op);

}  // namespace trident

#endif  // TRIDENT_REPORT_STEP_EVENTS_H_
