// The trace (trace_writer: Chrome trace-event JSON) of simulated steps: it parses, shows every
// GPU and stage, never overlaps intervals on one track, and names intervals by what they are.
// Simulations run in child processes (one SimGrid engine per process).
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "trace_support.h"

using namespace trident;
using namespace trident::testing;
using nlohmann::json;

namespace {

struct Track {
  std::string name;
  std::vector<int> gpus;
  int stage = -1;
  std::vector<const json*> events;
};

// Parses a trace and groups its complete events by track (pid, tid).
std::map<std::pair<int, int>, Track> tracks_of(const json& trace) {
  std::map<std::pair<int, int>, Track> tracks;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name") {
      Track& t = tracks[{e.at("pid"), e.at("tid")}];
      t.name = e.at("args").at("name");
      t.gpus = e.at("args").at("gpus").get<std::vector<int>>();
      t.stage = e.at("args").at("stage");
    } else if (e.at("ph") == "X") {
      tracks[{e.at("pid"), e.at("tid")}].events.push_back(&e);
    }
  }
  return tracks;
}

// Checks that intervals on each track never overlap; returns the names seen.
std::multiset<std::string> check_tracks(const std::map<std::pair<int, int>, Track>& tracks) {
  std::multiset<std::string> names;
  for (const auto& [key, track] : tracks) {
    INFO(track.name);
    CHECK(!track.name.empty());  // every track with events is named
    double last_end = -1;
    for (const json* e : track.events) {
      const double ts = e->at("ts"), dur = e->at("dur");
      CHECK(dur > 0);
      CHECK(ts >= last_end - 1e-9);  // events come in time order, and never overlap
      last_end = ts + dur;
      names.insert(e->at("name").get<std::string>());
    }
  }
  return names;
}

}  // namespace

TEST_CASE("trace of a fast 1F1B step: every GPU and stage, no overlaps, named intervals",
          "[trace]") {
  // Each stage fills one node, so TP groups have their NVLink links to themselves and their
  // all-reduces are fused into the passes in closed form.
  const int t = 2, p = 4, d = 4, m = 6;
  const Outputs out =
      simulate_outputs(small_scenario(t, p, d, m, ScheduleKind::k1F1B), Fidelity::kFast);
  const json trace = json::parse(out.trace);
  CHECK(trace.at("displayTimeUnit") == "ms");
  const auto tracks = tracks_of(trace);
  const std::multiset<std::string> names = check_tracks(tracks);

  std::set<int> gpus, stages;
  for (const auto& [key, track] : tracks) {
    gpus.insert(track.gpus.begin(), track.gpus.end());
    stages.insert(track.stage);
    // One actor per TP group: its tracks name the whole group, never one invented GPU.
    CHECK(track.gpus.size() == static_cast<size_t>(t));
    CHECK(track.name.find("(TP group, simulated once)") != std::string::npos);
    CHECK(key.first == track.gpus.front() / 8 + 1);  // one process per node
  }
  CHECK(gpus.size() == static_cast<size_t>(t * p * d));
  CHECK(*gpus.rbegin() == t * p * d - 1);
  CHECK(stages == std::set<int>{0, 1, 2, 3});

  // Every actor runs m forwards and m backwards; transfers appear on both ends.
  CHECK(names.count("F mb0") == static_cast<size_t>(p * d));
  CHECK(names.count("B mb5") == static_cast<size_t>(p * d));
  CHECK(names.count("recv act \u2190 stage 0") == static_cast<size_t>(m * d));
  CHECK(names.count("send act \u2192 stage 1") == static_cast<size_t>(m * d));
  CHECK(names.count("recv grad \u2190 stage 3") == static_cast<size_t>(m * d));
  CHECK(names.count("send grad \u2192 stage 2") == static_cast<size_t>(m * d));
  CHECK(names.count("optimizer") == static_cast<size_t>(p * d));
  CHECK(names.count("AR dp") == static_cast<size_t>(p * d));
  CHECK(names.count("AR tp embedding") > 0);
  CHECK(names.count("wait (bubble)") > 0);
  // Two all-reduces per layer and pass (no recomputation), laid out in closed form.
  CHECK(names.count("AR tp L0") == static_cast<size_t>(2 * 2 * m * d));
  CHECK(names.count("AR tp L7") == static_cast<size_t>(2 * 2 * m * d));

  for (const auto& [key, track] : tracks) {
    for (const json* e : track.events) {
      const std::string name = e->at("name");
      const json& args = e->at("args");
      if (name.rfind("AR tp L", 0) == 0) {
        INFO(name);
        const int layer = args.at("layer");
        CHECK(layer / 2 == track.stage);  // 8 layers over 4 stages
        CHECK(args.at("timing").get<std::string>().find("closed form") == 0);
        CHECK(args.at("bytes").get<double>() > 0);
      }
      if (name.rfind("F mb", 0) == 0) {
        CHECK(args.at("layers") ==
              std::to_string(2 * track.stage) + "-" + std::to_string(2 * track.stage + 1));
      }
      if (name.rfind("recv", 0) == 0) CHECK(args.at("bytes").get<double>() > 0);
    }
  }
}

TEST_CASE("trace of a full-fidelity step: a track per GPU, simulated TP collectives", "[trace]") {
  const Outputs out =
      simulate_outputs(small_scenario(2, 2, 1, 2, ScheduleKind::k1F1B), Fidelity::kFull);
  const json trace = json::parse(out.trace);
  const auto tracks = tracks_of(trace);
  const std::multiset<std::string> names = check_tracks(tracks);
  std::set<int> gpus;
  for (const auto& [key, track] : tracks) {
    REQUIRE(track.gpus.size() == 1);
    gpus.insert(track.gpus[0]);
    CHECK(track.name.rfind("GPU " + std::to_string(track.gpus[0]) + " \u00b7 ", 0) == 0);
    for (const json* e : track.events) {
      if (e->at("cat") == "tp") CHECK(e->at("args").at("timing") == "simulated");
    }
  }
  CHECK(gpus == std::set<int>{0, 1, 2, 3});
  CHECK(names.count("AR tp L0") == 2u * 2 * 2 * 2);  // 2 GPUs x 2 micro-batches x 2 passes x 2
}

TEST_CASE("trace of an interleaved step: chunks named, transfers wrap around", "[trace]") {
  Scenario sc = small_scenario(1, 2, 1, 4, ScheduleKind::kInterleaved1F1B);
  sc.plan.virtual_stages = 2;
  const Outputs out = simulate_outputs(sc, Fidelity::kFast);
  const json trace = json::parse(out.trace);
  const auto tracks = tracks_of(trace);
  const std::multiset<std::string> names = check_tracks(tracks);
  CHECK(names.count("F mb0 c0") == 2);
  CHECK(names.count("F mb0 c1") == 2);
  CHECK(names.count("B mb3 c1") == 2);
  // Stage 0's second chunk takes its input from stage 1's first.
  CHECK(names.count("recv act \u2190 stage 1") == 4);
  CHECK(names.count("send grad \u2192 stage 1") == 4);
  CHECK(out.svg.find("F chunk 1") != std::string::npos);
}

TEST_CASE("trace and timeline are byte-identical across runs", "[trace][svg]") {
  const Scenario sc = small_scenario(2, 2, 2, 4, ScheduleKind::k1F1B);
  const Outputs a = simulate_outputs(sc, Fidelity::kFast);
  const Outputs b = simulate_outputs(sc, Fidelity::kFast);
  CHECK(a.trace == b.trace);
  CHECK(a.svg == b.svg);
}

TEST_CASE("trace names sequence-parallel and distributed-optimizer collectives", "[trace]") {
  Scenario sc = small_scenario(2, 2, 2, 4, ScheduleKind::k1F1B);
  sc.plan.sequence_parallel = true;
  sc.plan.distributed_optimizer = true;
  sc.plan.overlap_grad_reduce = true;
  const Outputs out = simulate_outputs(sc, Fidelity::kFast);
  const json trace = json::parse(out.trace);
  const std::multiset<std::string> names = check_tracks(tracks_of(trace));
  CHECK(names.count("RS tp L0") > 0);
  CHECK(names.count("AG tp L0") > 0);
  CHECK(names.count("RS dp (wait for buckets)") == 4);  // every actor waits once
  CHECK(names.count("AG dp") == 4);                     // and gathers its updated weights
}

TEST_CASE("the trace estimate counts the actors the shortcut record simulates", "[trace]") {
  // Events scale with the simulated actors: replicas_simulated data-parallel replicas (one
  // stands for the others with one_replica), one actor per TP group in fast mode and per GPU
  // in full. Small plans stay under the closed-form budget, so the ratios are exact.
  const Scenario sc = small_scenario(2, 2, 8, 4, ScheduleKind::k1F1B);
  const std::vector<StageProgram> programs = build_programs(sc.plan);
  const Shortcuts fast = decide_shortcuts(sc, Fidelity::kFast);
  const Shortcuts full = decide_shortcuts(sc, Fidelity::kFull);
  REQUIRE(fast.group_actor.taken);
  REQUIRE_FALSE(full.group_actor.taken);
  REQUIRE(fast.one_replica.taken);  // one replica simulated for eight
  const double f = static_cast<double>(estimate_trace_bytes(sc, programs, fast));
  const double g = static_cast<double>(estimate_trace_bytes(sc, programs, full));
  CHECK(g / f == Approx(2.0 * full.replicas_simulated(sc.plan) / fast.replicas_simulated(sc.plan))
                     .epsilon(1e-12));
  Shortcuts every = fast;
  every.one_replica.taken = false;
  const double e = static_cast<double>(estimate_trace_bytes(sc, programs, every));
  CHECK(e / f == Approx(8.0 / fast.replicas_simulated(sc.plan)).epsilon(1e-12));
}
