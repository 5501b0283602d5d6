#include "report/step_events.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "engine/collective_lowering.h"
#include "schedule/rank_map.h"
#include "workload/layer_ops.h"

namespace trident {
namespace {

int count_tp(const std::vector<Op>& ops) {
  return static_cast<int>(std::count_if(
      ops.begin(), ops.end(), [](const Op& op) { return op.kind == OpKind::kTpCollective; }));
}

// One TP collective of a pass: its layer, and where it sits in the closed-form pass.
struct PassCollective {
  CollectiveOp op = CollectiveOp::kAllReduce;
  double bytes = 0;
  int layer = kLayerUnknown;
  double offset = 0, duration = 0;  // seconds from the pass start, closed form
};

struct PassLayout {
  std::vector<PassCollective> collectives;
  double duration = 0;  // closed-form pass time (what the engine runs when TP is fused)
};

// Lays out the collectives of a chunk's pass. The pass is the embedding's ops (first chunk),
// then `num_layers` identical layers, then the output layer's (last chunk) — reversed for the
// backward pass — so each collective's layer follows from its index once the embedding's and
// output's collectives are counted; if the counts do not add up, layers stay unknown.
PassLayout layout_pass(const ChunkWork& ch, bool backward, const LayerDims& dims, int t,
                       const NvlinkSpec& nvl) {
  const Pass& pass = backward ? ch.backward : ch.forward;
  PassLayout out;
  double time = 0;
  for (const Segment& seg : pass.segments) {
    double exposed = 0;
    const double seg_time = fuse_segment(seg, t, nvl, &exposed);
    if (seg.tp_bytes > 0 && t > 1) {
      PassCollective c;
      c.op = seg.tp_op;
      c.bytes = seg.tp_bytes;
      c.offset = time + seg.compute_s;
      c.duration = ring_collective_time(seg.tp_op, t, seg.tp_bytes, nvl.latency, nvl.bandwidth,
                                        nvl.protocol_efficiency);
      out.collectives.push_back(c);
    }
    time += seg_time;
  }
  out.duration = time;
  const int n = static_cast<int>(out.collectives.size());
  if (n == 0) return out;
  const int embedding = ch.has_embedding ? count_tp(backward ? embedding_backward_ops(dims)
                                                             : embedding_forward_ops(dims))
                                         : 0;
  const int output =
      ch.has_output ? count_tp(backward ? output_backward_ops(dims) : output_forward_ops(dims)) : 0;
  const int pre = backward ? output : embedding, post = backward ? embedding : output;
  const int body = n - pre - post;
  if (body < 0 || (ch.num_layers > 0 ? body % ch.num_layers != 0 : body != 0)) return out;
  const int per_layer = ch.num_layers > 0 ? body / ch.num_layers : 1;
  for (int k = 0; k < n; ++k) {
    int& layer = out.collectives[k].layer;
    if (k < pre) {
      layer = backward ? kLayerOutput : kLayerEmbedding;
    } else if (k >= n - post) {
      layer = backward ? kLayerEmbedding : kLayerOutput;
    } else {
      const int i = (k - pre) / per_layer;
      layer = backward ? ch.first_layer + ch.num_layers - 1 - i : ch.first_layer + i;
    }
  }
  return out;
}

bool is_recv(InstrKind k) {
  return k == InstrKind::kRecvActivation || k == InstrKind::kRecvGradient;
}
bool is_dp(InstrKind k) { return k == InstrKind::kDpGradReduce || k == InstrKind::kDpParamGather; }

StepEvent base_event(const Interval& iv, EventKind kind) {
  StepEvent e;
  e.start = iv.start;
  e.end = iv.end;
  e.kind = kind;
  e.microbatch = iv.microbatch;
  e.chunk = iv.chunk;
  return e;
}

// Fills a transfer (or bubble) event from the recv instruction it belongs to.
void set_peer(const Instr* in, int stage, int stages, int virtual_stages, StepEvent* e) {
  if (in == nullptr || in->microbatch != e->microbatch || in->chunk != e->chunk) return;
  e->gradient = in->kind == InstrKind::kRecvGradient;
  const bool first = stage == 0 && in->chunk == 0;
  const bool last = stage == stages - 1 && in->chunk == virtual_stages - 1;
  if (e->gradient ? last : first) return;  // no such neighbour: leave the peer unknown
  const StageChunk from = e->gradient ? next_virtual_stage(stage, in->chunk, stages)
                                      : previous_virtual_stage(stage, in->chunk, stages);
  e->peer_stage = from.stage;
  e->peer_chunk = from.chunk;
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
  }
  return "?";
}

std::vector<ActorEvents> step_events(const Scenario& sc, const Workload& w,
                                     const std::vector<StageProgram>& programs, const Timeline& tl,
                                     const StepEventOptions& options) {
  const PlanSpec& plan = sc.plan;
  const int t = plan.tensor, p = plan.pipeline;
  const int v = w.stages.empty() ? 1 : static_cast<int>(w.stages.front().chunks.size());
  const LayerDims dims = make_layer_dims(sc.model, plan);
  // layouts[stage][chunk][backward]
  std::vector<std::vector<std::vector<PassLayout>>> layouts(w.stages.size());
  for (size_t s = 0; s < w.stages.size(); ++s) {
    for (const ChunkWork& ch : w.stages[s].chunks) {
      layouts[s].push_back({layout_pass(ch, false, dims, t, sc.cluster.nvlink),
                            layout_pass(ch, true, dims, t, sc.cluster.nvlink)});
    }
  }
  const RankMap ranks(plan, sc.cluster);
  std::map<std::tuple<int, int, int>, int> actor_at;  // (stage, data rank, tensor rank)
  std::vector<ActorEvents> out(tl.actors.size());
  std::vector<bool> fused(tl.actors.size(), false);
  long closed_form = 0;
  for (size_t i = 0; i < tl.actors.size(); ++i) {
    const ActorTimeline& a = tl.actors[i];
    actor_at[{a.stage, a.data_rank, a.tensor_rank}] = static_cast<int>(i);
    out[i].actor = static_cast<int>(i);
    if (a.tensor_rank >= 0) {
      out[i].gpus = {ranks.gpu(a.tensor_rank, a.data_rank, a.stage)};
    } else {
      out[i].gpus = ranks.tensor_group(a.data_rank, a.stage);
    }
    // TP collectives are fused into passes when the actor recorded none of its own.
    fused[i] =
        t > 1 && std::none_of(a.intervals.begin(), a.intervals.end(),
                              [](const Interval& iv) { return iv.kind == IntervalKind::kTpComm; });
    if (!fused[i]) continue;
    for (const Interval& iv : a.intervals) {
      if (iv.kind != IntervalKind::kForward && iv.kind != IntervalKind::kBackward) continue;
      if (iv.chunk < 0 || iv.chunk >= v) continue;
      closed_form += static_cast<long>(
          layouts[a.stage][iv.chunk][iv.kind == IntervalKind::kBackward].collectives.size());
    }
  }
  const bool lay_out_all = closed_form <= options.max_closed_form_events;

  for (size_t i = 0; i < tl.actors.size(); ++i) {
    const ActorTimeline& a = tl.actors[i];
    const StageWork& st = w.stages[a.stage];
    std::vector<const Instr*> recvs, dps;
    for (const Instr& in : programs[a.stage].instrs) {
      if (is_recv(in.kind)) recvs.push_back(&in);
      if (is_dp(in.kind)) dps.push_back(&in);
    }
    size_t next_recv = 0, next_dp = 0;
    std::vector<const Interval*> pending_tp;  // recorded before the pass that ran them
    const bool lay_out = fused[i] && (lay_out_all || a.data_rank == 0);
    std::vector<StepEvent>& events = out[i].events;
    for (const Interval& iv : a.intervals) {
      switch (iv.kind) {
        case IntervalKind::kForward:
        case IntervalKind::kBackward: {
          const bool bwd = iv.kind == IntervalKind::kBackward;
          StepEvent e = base_event(iv, bwd ? EventKind::kBackward : EventKind::kForward);
          static const PassLayout kNoLayout;
          const bool known_chunk = iv.chunk >= 0 && iv.chunk < v;
          const PassLayout& lay = known_chunk ? layouts[a.stage][iv.chunk][bwd] : kNoLayout;
          if (known_chunk) {
            e.first_layer = st.chunks[iv.chunk].first_layer;
            e.num_layers = st.chunks[iv.chunk].num_layers;
          }
          e.tp_collectives = static_cast<int>(lay.collectives.size());
          if (!pending_tp.empty()) {
            e.tp = TpDetail::kSimulated;
            for (size_t k = 0; k < pending_tp.size(); ++k) {
              StepEvent c = base_event(*pending_tp[k], EventKind::kTpCollective);
              c.microbatch = iv.microbatch;
              c.chunk = iv.chunk;
              c.tp = TpDetail::kSimulated;
              if (pending_tp.size() == lay.collectives.size()) {
                c.op = lay.collectives[k].op;
                c.bytes = lay.collectives[k].bytes;
                c.first_layer = lay.collectives[k].layer;
              } else {
                c.first_layer = kLayerUnknown;
              }
              events.push_back(c);
            }
            pending_tp.clear();
          } else if (fused[i] && !lay.collectives.empty()) {
            e.tp = lay_out ? TpDetail::kClosedForm : TpDetail::kClosedFormHidden;
            const double scale = lay.duration > 0 ? (iv.end - iv.start) / lay.duration : 0;
            for (const PassCollective& pc : lay.collectives) {
              if (!lay_out) break;
              StepEvent c = base_event(iv, EventKind::kTpCollective);
              c.start = std::min(iv.end, iv.start + pc.offset * scale);
              c.end = std::min(iv.end, c.start + pc.duration * scale);
              c.op = pc.op;
              c.bytes = pc.bytes;
              c.first_layer = pc.layer;
              c.tp = TpDetail::kClosedForm;
              events.push_back(c);
            }
          }
          events.push_back(e);
          break;
        }
        case IntervalKind::kTpComm:
          pending_tp.push_back(&iv);
          break;
        case IntervalKind::kOptimizer:
          events.push_back(base_event(iv, EventKind::kOptimizer));
          break;
        case IntervalKind::kPpWait: {
          StepEvent e = base_event(iv, EventKind::kBubble);
          set_peer(next_recv < recvs.size() ? recvs[next_recv] : nullptr, a.stage, p, v, &e);
          events.push_back(e);
          break;
        }
        case IntervalKind::kPpComm: {
          StepEvent e = base_event(iv, EventKind::kRecv);
          set_peer(next_recv < recvs.size() ? recvs[next_recv] : nullptr, a.stage, p, v, &e);
          ++next_recv;
          e.bytes = st.p2p_bytes;
          events.push_back(e);
          if (e.peer_stage < 0) break;
          const auto sender = actor_at.find({e.peer_stage, a.data_rank, a.tensor_rank});
          if (sender == actor_at.end()) break;
          StepEvent s = e;
          s.kind = EventKind::kSend;
          s.chunk = e.peer_chunk;
          s.peer_stage = a.stage;
          s.peer_chunk = e.chunk;
          out[sender->second].events.push_back(s);
          break;
        }
        case IntervalKind::kDpComm: {
          StepEvent e = base_event(iv, EventKind::kDpCollective);
          e.microbatch = -1;
          e.op =
              plan.distributed_optimizer ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce;
          e.bytes = st.grad_bytes;
          if (iv.bucket >= 0) {
            e.bucket = iv.bucket;
            e.bytes = std::min(st.grad_bytes, st.grad_bucket_params * st.grad_bytes /
                                                  std::max(1.0, st.params_per_gpu));
          } else if (next_dp < dps.size()) {
            const Instr* in = dps[next_dp++];
            if (in->kind == InstrKind::kDpParamGather) {
              e.op = CollectiveOp::kAllGather;
              e.bytes = st.param_gather_bytes;
            } else {
              e.bucket_wait = plan.overlap_grad_reduce && plan.data > 1;
            }
          }
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
