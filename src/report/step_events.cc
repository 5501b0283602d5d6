#include "report/step_events.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace trident {
namespace {

StepEvent base_event(const Interval& iv, EventKind kind) {
  StepEvent e;
  e.start = iv.start;
  e.end = iv.end;
  e.kind = kind;
  e.microbatch = iv.microbatch;
  e.chunk = iv.chunk;
  return e;
}

// Fills a transfer (or bubble) event with the neighbour the engine recorded on its interval.
void set_peer(const Interval& iv, StepEvent* e) {
  e->gradient = iv.gradient;
  if (iv.peer_stage < 0) return;  // none recorded: leave the peer unknown
  e->peer_stage = iv.peer_stage;
  e->peer_chunk = iv.peer_chunk;
}

}  // namespace

EventTrack event_track(EventKind kind) {
  switch (kind) {
    case EventKind::kForward:
    case EventKind::kBackward:
    case EventKind::kOptimizer:
    case EventKind::kBubble:
      return EventTrack::kCompute;
    case EventKind::kSend:
      return EventTrack::kSend;
    case EventKind::kTpCollective:
    case EventKind::kRecv:
    case EventKind::kDpCollective:
    case EventKind::kCpTransfer:
    case EventKind::kEpCollective:
    case EventKind::kHostOptimizer:
      break;
  }
  return EventTrack::kComm;
}

const char* collective_abbrev(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce:
      return "AR";
    case CollectiveOp::kReduceScatter:
      return "RS";
    case CollectiveOp::kAllGather:
      return "AG";
    case CollectiveOp::kAllToAll:
      return "A2A";
  }
  return "?";
}

std::string event_name(const StepEvent& e, int virtual_stages) {
  const std::string chunk = virtual_stages > 1 ? fmt::format(" c{}", e.chunk) : "";
  const char* what = e.gradient ? "grad" : "act";
  switch (e.kind) {
    case EventKind::kForward:
      return fmt::format("F mb{}{}", e.microbatch, chunk);
    case EventKind::kBackward:
      return fmt::format("B mb{}{}", e.microbatch, chunk);
    case EventKind::kOptimizer:
      return "optimizer";
    case EventKind::kBubble:
      return "wait (bubble)";
    case EventKind::kTpCollective: {
      const std::string name = fmt::format("{} tp", collective_abbrev(e.op));
      if (e.first_layer >= 0) return fmt::format("{} L{}", name, e.first_layer);
      if (e.first_layer == kLayerEmbedding) return name + " embedding";
      if (e.first_layer == kLayerOutput) return name + " output";
      return name;
    }
    case EventKind::kRecv:
      if (e.peer_stage < 0) return "recv";
      return fmt::format("recv {} \u2190 stage {}", what, e.peer_stage);
    case EventKind::kSend:
      return fmt::format("send {} \u2192 stage {}", what, e.peer_stage);
    case EventKind::kDpCollective: {
      const std::string name = fmt::format("{} dp", collective_abbrev(e.op));
      if (e.bucket >= 0) return fmt::format("{} bucket {}", name, e.bucket);
      return e.bucket_wait ? name + " (wait for buckets)" : name;
    }
    case EventKind::kCpTransfer:
      if (e.first_layer >= 0) return fmt::format("cp K/V L{}", e.first_layer);
      return "cp K/V";
    case EventKind::kEpCollective: {
      const std::string name = fmt::format("{} ep", collective_abbrev(e.op));
      if (e.first_layer >= 0) return fmt::format("{} L{}", name, e.first_layer);
      return name + " expert grads";
    }
    case EventKind::kHostOptimizer:
      return "host optimizer (D2H, CPU Adam, H2D)";
  }
  return "?";
}

namespace {

TpDetail tp_detail(TpTiming t) {
  switch (t) {
    case TpTiming::kNone:
      break;
    case TpTiming::kSimulated:
      return TpDetail::kSimulated;
    case TpTiming::kClosedForm:
      return TpDetail::kClosedForm;
    case TpTiming::kClosedFormUnrecorded:
      return TpDetail::kClosedFormHidden;
  }
  return TpDetail::kNone;
}

}  // namespace

std::vector<ActorEvents> step_events(const Workload& w, const Timeline& tl) {
  const int v = w.stages.empty() ? 1 : static_cast<int>(w.stages.front().chunks.size());
  // (stage, data rank, context rank, tensor rank)
  std::map<std::tuple<int, int, int, int>, int> actor_at;
  std::vector<ActorEvents> out(tl.actors.size());
  for (size_t i = 0; i < tl.actors.size(); ++i) {
    const ActorTimeline& a = tl.actors[i];
    actor_at[{a.stage, a.data_rank, a.context_rank, a.tensor_rank}] = static_cast<int>(i);
    out[i].actor = static_cast<int>(i);
    out[i].gpus = a.gpu_ids;
  }

  for (size_t i = 0; i < tl.actors.size(); ++i) {
    const ActorTimeline& a = tl.actors[i];
    const StageWork& st = w.stages[a.stage];
    std::vector<StepEvent>& events = out[i].events;
    for (const Interval& iv : a.intervals) {
      switch (iv.kind) {
        case IntervalKind::kForward:
        case IntervalKind::kBackward: {
          const bool bwd = iv.kind == IntervalKind::kBackward;
          StepEvent e = base_event(iv, bwd ? EventKind::kBackward : EventKind::kForward);
          if (iv.chunk >= 0 && iv.chunk < v) {
            const ChunkWork& ch = st.chunks[iv.chunk];
            e.first_layer = ch.first_layer;
            e.num_layers = ch.num_layers;
            e.tp_collectives = (bwd ? ch.backward : ch.forward).collectives;
          }
          e.tp = tp_detail(iv.tp);
          events.push_back(e);
          break;
        }
        case IntervalKind::kTpComm: {
          StepEvent c = base_event(iv, EventKind::kTpCollective);
          c.op = iv.op;
          c.bytes = iv.bytes;
          c.first_layer = iv.layer;
          c.tp = tp_detail(iv.tp);
          events.push_back(c);
          break;
        }
        case IntervalKind::kOptimizer:
          events.push_back(base_event(iv, EventKind::kOptimizer));
          break;
        case IntervalKind::kPpWait: {
          StepEvent e = base_event(iv, EventKind::kBubble);
          set_peer(iv, &e);
          events.push_back(e);
          break;
        }
        case IntervalKind::kPpComm: {
          StepEvent e = base_event(iv, EventKind::kRecv);
          set_peer(iv, &e);
          e.bytes = iv.bytes;
          events.push_back(e);
          if (e.peer_stage < 0) break;
          const auto sender =
              actor_at.find({e.peer_stage, a.data_rank, a.context_rank, a.tensor_rank});
          if (sender == actor_at.end()) break;
          StepEvent s = e;
          s.kind = EventKind::kSend;
          s.chunk = e.peer_chunk;
          s.peer_stage = a.stage;
          s.peer_chunk = e.chunk;
          out[sender->second].events.push_back(s);
          break;
        }
        case IntervalKind::kEpComm: {
          StepEvent c = base_event(iv, EventKind::kEpCollective);
          c.op = iv.op;
          c.bytes = iv.bytes;
          c.first_layer = iv.layer;
          events.push_back(c);
          break;
        }
        case IntervalKind::kDpComm: {
          StepEvent e = base_event(iv, EventKind::kDpCollective);
          e.microbatch = -1;
          e.op = iv.op;
          e.bytes = iv.bytes;
          e.bucket = iv.bucket;
          e.bucket_wait = iv.bucket_wait;
          events.push_back(e);
          break;
        }
        case IntervalKind::kHostOptimizer: {
          StepEvent e = base_event(iv, EventKind::kHostOptimizer);
          e.bytes = iv.bytes;
          events.push_back(e);
          break;
        }
        case IntervalKind::kCpComm: {
          StepEvent e = base_event(iv, EventKind::kCpTransfer);
          e.bytes = iv.bytes;
          e.first_layer = iv.layer;
          events.push_back(e);
          break;
        }
      }
    }
  }
  for (ActorEvents& ae : out) {
    std::stable_sort(ae.events.begin(), ae.events.end(),
                     [](const StepEvent& x, const StepEvent& y) {
                       const EventTrack tx = event_track(x.kind), ty = event_track(y.kind);
                       if (tx != ty) return tx < ty;
                       return x.start < y.start || (x.start == y.start && x.end < y.end);
                     });
  }
  return out;
}

}  // namespace trident
