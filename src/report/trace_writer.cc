#include "report/trace_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "report/plan_label.h"

namespace trident {
namespace {

using Json = nlohmann::ordered_json;

std::int64_t to_ns(double seconds) { return std::llround(seconds * 1e9); }

// Microseconds with three decimals, from integer nanoseconds (exact, deterministic).
std::string us(std::int64_t ns) { return fmt::format("{}.{:03d}", ns / 1000, ns % 1000); }

std::string bytes_text(double b) { return fmt::format("{:.0f}", b); }

const char* track_name(EventTrack t) {
  switch (t) {
    case EventTrack::kCompute:
      return "compute";
    case EventTrack::kComm:
      return "comm";
    case EventTrack::kSend:
      return "send";
  }
  return "?";
}

const char* category(EventKind k) {
  switch (k) {
    case EventKind::kForward:
      return "forward";
    case EventKind::kBackward:
      return "backward";
    case EventKind::kOptimizer:
      return "optimizer";
    case EventKind::kBubble:
      return "bubble";
    case EventKind::kTpCollective:
      return "tp";
    case EventKind::kRecv:
    case EventKind::kSend:
      return "pp";
    case EventKind::kDpCollective:
      return "dp";
    case EventKind::kCpTransfer:
      return "cp";
    case EventKind::kEpCollective:
      return "ep";
    case EventKind::kHostOptimizer:
      return "optimizer";
  }
  return "?";
}

std::string layer_text(int layer) {
  if (layer >= 0) return std::to_string(layer);
  if (layer == kLayerEmbedding) return "\"embedding\"";
  if (layer == kLayerOutput) return "\"output\"";
  return "\"unknown\"";
}

// The event's args object, as JSON text.
std::string args_json(const StepEvent& e, int v) {
  std::string a;
  auto add = [&a](const std::string& key, const std::string& value) {
    a += fmt::format("{}\"{}\":{}", a.empty() ? "" : ",", key, value);
  };
  auto add_str = [&add](const std::string& key, const std::string& value) {
    add(key, "\"" + value + "\"");
  };
  const bool transfer = e.kind == EventKind::kRecv || e.kind == EventKind::kSend;
  if (e.microbatch >= 0) add("microbatch", std::to_string(e.microbatch));
  if (e.microbatch >= 0 || transfer) add("chunk", std::to_string(e.chunk));
  switch (e.kind) {
    case EventKind::kForward:
    case EventKind::kBackward:
      if (e.num_layers > 0) {
        add_str("layers", fmt::format("{}-{}", e.first_layer, e.first_layer + e.num_layers - 1));
      }
      if (e.tp_collectives > 0) add("tp_collectives", std::to_string(e.tp_collectives));
      if (e.tp == TpDetail::kClosedForm) {
        add_str("tp", "closed form, fused into this pass; laid out on the comm track");
      } else if (e.tp == TpDetail::kClosedFormHidden) {
        add_str("tp", "closed form, fused into this pass; recorded for data rank 0 only");
      } else if (e.tp == TpDetail::kSimulated) {
        add_str("tp", "simulated, on the comm track");
      }
      break;
    case EventKind::kTpCollective:
      add("layer", layer_text(e.first_layer));
      add_str("op", collective_op_name(e.op));
      if (e.bytes > 0) add("bytes", bytes_text(e.bytes));
      add_str("timing",
              e.tp == TpDetail::kClosedForm
                  ? "closed form (the engine's time for it in the fused pass, not simulated flows)"
                  : "simulated");
      break;
    case EventKind::kRecv:
    case EventKind::kSend:
    case EventKind::kBubble: {
      if (e.peer_stage < 0) break;
      const bool recv = e.kind != EventKind::kSend;
      add_str("data", e.gradient ? "activation gradients" : "activations");
      add(recv ? "from_stage" : "to_stage", std::to_string(e.peer_stage));
      if (v > 1) add(recv ? "from_chunk" : "to_chunk", std::to_string(e.peer_chunk));
      if (transfer) add("bytes", bytes_text(e.bytes));
      break;
    }
    case EventKind::kDpCollective:
      add_str("op", collective_op_name(e.op));
      if (e.bucket >= 0) add("bucket", std::to_string(e.bucket));
      add("bytes", bytes_text(e.bytes));
      if (e.bucket_wait) add_str("note", "waits for the buckets reduced during backward");
      break;
    case EventKind::kCpTransfer:
      add("layer", layer_text(e.first_layer));
      add("bytes", bytes_text(e.bytes));
      add_str("note", "sent to the next context rank while an attention block runs");
      break;
    case EventKind::kEpCollective:
      add_str("op", collective_op_name(e.op));
      if (e.first_layer >= 0) add("layer", layer_text(e.first_layer));
      add("bytes", bytes_text(e.bytes));
      break;
    case EventKind::kOptimizer:
      break;
    case EventKind::kHostOptimizer:
      add("bytes", bytes_text(e.bytes));
      add_str("note", "gradients to the host, its CPU optimizer step, weights back");
      break;
  }
  return "{" + a + "}";
}

struct Placed {
  const StepEvent* event;
  std::int64_t start, end;  // ns
};

// Splits one track's events (sorted by start) into lanes whose events never overlap:
// each event goes to the first lane free at its start.
std::vector<std::vector<Placed>> lanes_of(const std::vector<const StepEvent*>& events) {
  std::vector<std::vector<Placed>> lanes;
  for (const StepEvent* e : events) {
    const Placed pl{e, to_ns(e->start), to_ns(e->end)};
    if (pl.end <= pl.start) continue;  // nothing to draw at nanosecond resolution
    size_t lane = 0;
    while (lane < lanes.size() && lanes[lane].back().end > pl.start) ++lane;
    if (lane == lanes.size()) lanes.emplace_back();
    lanes[lane].push_back(pl);
  }
  return lanes;
}

}  // namespace

std::string gpu_list_name(const std::vector<int>& gpus) {
  if (gpus.size() == 1) return fmt::format("GPU {}", gpus[0]);
  bool contiguous = !gpus.empty();
  for (size_t i = 1; i < gpus.size(); ++i) contiguous = contiguous && gpus[i] == gpus[i - 1] + 1;
  if (contiguous) return fmt::format("GPUs {}-{}", gpus.front(), gpus.back());
  return fmt::format("GPUs {}", fmt::join(gpus, ","));
}

std::string format_trace(const Scenario& sc, const Workload& w, const Timeline& tl) {
  std::string out;
  write_trace(sc, w, tl, [&out](const std::string& piece) { out += piece; });
  return out;
}

std::int64_t estimate_trace_bytes(const Scenario& sc, const std::vector<StageProgram>& programs,
                                  const Shortcuts& shortcuts) {
  const PlanSpec& p = sc.plan;
  const bool full = !shortcuts.group_actor.taken;
  const double replicas =
      static_cast<double>(shortcuts.replicas_simulated(p)) * p.context * (full ? p.tensor : 1);
  double instrs = 0, passes = 0;
  for (const StageProgram& prog : programs) {
    instrs += static_cast<double>(prog.instrs.size());
    for (const Instr& i : prog.instrs) {
      passes += i.kind == InstrKind::kForward || i.kind == InstrKind::kBackward;
    }
  }
  double events = instrs * replicas;
  if (p.tensor > 1 && p.pipeline > 0) {
    // Two collectives per layer and pass; closed-form ones past the budget for DP rank 0 only.
    const double layers_per_pass =
        static_cast<double>(sc.model.num_layers) / p.pipeline / std::max(1, p.virtual_stages);
    const double tp = passes * layers_per_pass * 2 * replicas;
    // The engine records closed-form TP intervals for data rank 0 only past its budget.
    events += !full && tp > kTraceClosedFormBudget ? tp / p.data : tp;
  }
  const double bytes = 150 * events;
  return bytes > 9e18 ? static_cast<std::int64_t>(9e18) : static_cast<std::int64_t>(bytes);
}

void write_trace(const Scenario& sc, const Workload& w, const Timeline& tl,
                 const std::function<void(const std::string&)>& sink) {
  const PlanSpec& plan = sc.plan;
  const int v = w.stages.empty() ? 1 : static_cast<int>(w.stages.front().chunks.size());
  const std::vector<ActorEvents> all = step_events(w, tl);
  std::vector<const ActorEvents*> order;
  for (const ActorEvents& ae : all) order.push_back(&ae);
  std::stable_sort(order.begin(), order.end(), [](const ActorEvents* x, const ActorEvents* y) {
    return x->gpus.front() < y->gpus.front();
  });

  Json other;
  other["scenario"] = sc.path;
  other["model"] = sc.model.name;
  other["cluster"] = sc.cluster.name;
  other["plan"] =
      fmt::format("{} v={}, {} micro-batches of {}, {}", plan_label(plan), v, plan.num_microbatches,
                  plan.micro_batch_size, schedule_name(plan.schedule));
  other["step_time_s"] = tl.step_time_s;
  other["fidelity"] = fidelity_name(tl.shortcuts.fidelity);
  Json shortcuts = Json::object();
  for (const auto& [name, shortcut] : named_shortcuts(tl.shortcuts)) {
    shortcuts[name] = {{"taken", shortcut->taken}, {"reason", shortcut->reason}};
  }
  other["shortcuts"] = shortcuts;
  other["tracks"] =
      "per simulated actor: compute, comm (what it waits on from the network), send (transfers "
      "it sources); micro-batches, chunks, layers and stages count from 0";

  // Names may hold bytes that are not UTF-8: replaced (U+FFFD), never a failed dump.
  std::string out = "{\"displayTimeUnit\":\"ms\",\"otherData\":" +
                    other.dump(-1, ' ', false, Json::error_handler_t::replace) +
                    ",\"traceEvents\":[\n";
  bool first = true;
  auto emit = [&out, &first, &sink](const std::string& event) {
    out += (first ? "" : ",\n") + event;
    first = false;
    if (out.size() >= (1 << 16)) {
      sink(out);
      out.clear();
    }
  };
  int last_node = -1, tid = 0;
  for (const ActorEvents* ae : order) {
    const ActorTimeline& a = tl.actors[ae->actor];
    const int node = ae->gpus.front() / sc.cluster.gpus_per_node;
    const int pid = node + 1;
    if (node != last_node) {
      emit(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"args":{{"name":"node {}"}}}})",
                       pid, node));
      emit(fmt::format(
          R"({{"ph":"M","name":"process_sort_index","pid":{},"args":{{"sort_index":{}}}}})", pid,
          node));
      last_node = node;
    }
    std::string who = gpu_list_name(ae->gpus);
    if (a.tensor_rank < 0 && ae->gpus.size() > 1) who += " (TP group, simulated once)";
    if (a.gpus > static_cast<int>(ae->gpus.size())) {
      who += fmt::format(" standing for all {} data-parallel replicas",
                         a.gpus / static_cast<int>(ae->gpus.size()));
    }
    Json gpus = ae->gpus;
    for (EventTrack track : {EventTrack::kCompute, EventTrack::kComm, EventTrack::kSend}) {
      std::vector<const StepEvent*> events;
      for (const StepEvent& e : ae->events) {
        if (event_track(e.kind) == track) events.push_back(&e);
      }
      std::vector<std::vector<Placed>> lanes = lanes_of(events);
      if (lanes.empty() && track != EventTrack::kSend) lanes.emplace_back();  // show every GPU
      for (size_t lane = 0; lane < lanes.size(); ++lane) {
        ++tid;
        const std::string name =
            fmt::format("{} \u00b7 {}{} \u00b7 stage {}, dp {}{}", who, track_name(track),
                        lane == 0 ? "" : fmt::format(" {}", lane + 1), a.stage, a.data_rank,
                        plan.context > 1 ? fmt::format(", cp {}", a.context_rank) : "");
        emit(fmt::format(
            R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"{}","gpus":{},"stage":{},"data_rank":{},"tensor_rank":{}}}}})",
            pid, tid, name, gpus.dump(), a.stage, a.data_rank, a.tensor_rank));
        emit(fmt::format(
            R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
            pid, tid, tid));
        for (const Placed& pl : lanes[lane]) {
          const StepEvent& e = *pl.event;
          emit(fmt::format(
              R"({{"ph":"X","name":"{}","cat":"{}","pid":{},"tid":{},"ts":{},"dur":{},"args":{}}})",
              event_name(e, v), category(e.kind), pid, tid, us(pl.start), us(pl.end - pl.start),
              args_json(e, v)));
        }
      }
    }
  }
  out += "\n]}\n";
  sink(out);
}

}  // namespace trident
