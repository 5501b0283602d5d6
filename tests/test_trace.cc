// The trace (Chrome trace-event JSON) and the SVG timeline of simulated steps: they parse, show
// every GPU and stage, never overlap intervals on one track, name intervals by what they are,
// render with a real SVG renderer, and stay within their element budget at 64 x 512.
// Simulations run in child processes (one SimGrid engine per process).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "core/isolated_run.h"
#include "engine/simulator.h"
#include "report/svg_timeline.h"
#include "report/trace_writer.h"
#include "schedule/program.h"
#include "test_support.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;
using nlohmann::json;

namespace {

constexpr char kSeparator = '\x1e';

struct Outputs {
  std::string trace, svg;
};

// Simulates `sc` in a child process with intervals recorded; returns its trace and timeline.
Outputs simulate_outputs(const Scenario& sc, Fidelity fidelity) {
  const std::string both = run_isolated([&]() {
    const Workload w = build_workload(sc);
    const std::vector<StageProgram> programs = build_programs(sc.plan);
    SimOptions opt;
    opt.fidelity = fidelity;
    opt.record_intervals = true;
    const Timeline tl = simulate_step(sc, w, programs, opt);
    return format_trace(sc, w, programs, tl) + kSeparator + format_svg_timeline(sc, tl);
  });
  const size_t cut = both.find(kSeparator);
  REQUIRE(cut != std::string::npos);
  return {both.substr(0, cut), both.substr(cut + 1)};
}

Scenario small_scenario(int t, int p, int d, int m, ScheduleKind schedule) {
  return scenario(a100_cluster((t * p * d + 7) / 8), gpt_model(8, 1024, 16, 512, 32000),
                  plan(t, p, d, 1, m, schedule));
}

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

std::string write_temp(const std::string& name, const std::string& content) {
  const std::string path = std::filesystem::temp_directory_path() /
                           ("trident_test_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

struct Png {
  unsigned width = 0, height = 0;
  std::uintmax_t bytes = 0;
};

// Renders `svg` with rsvg-convert (Debian librsvg2-bin) and reads the PNG's size.
Png render(const std::string& svg, const std::string& name) {
  REQUIRE(std::system("command -v rsvg-convert >/dev/null 2>&1") == 0);  // apt install librsvg2-bin
  const std::string in = write_temp(name + ".svg", svg), out = in + ".png";
  const std::string cmd = "rsvg-convert '" + in + "' -o '" + out + "' 2>/dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::ifstream f(out, std::ios::binary);
  unsigned char header[24] = {};
  f.read(reinterpret_cast<char*>(header), sizeof header);
  Png png;
  REQUIRE(std::string(reinterpret_cast<char*>(header) + 1, 3) == "PNG");
  png.width = header[16] << 24 | header[17] << 16 | header[18] << 8 | header[19];
  png.height = header[20] << 24 | header[21] << 16 | header[22] << 8 | header[23];
  png.bytes = std::filesystem::file_size(out);
  std::filesystem::remove(in);
  std::filesystem::remove(out);
  return png;
}

double svg_height(const std::string& svg) {
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, std::regex("height=\"([0-9.]+)\"")));
  return std::stod(m[1]);
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
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

TEST_CASE("timeline of 2 stages x 4 micro-batches renders, labelled", "[svg]") {
  const Outputs out =
      simulate_outputs(small_scenario(1, 2, 1, 4, ScheduleKind::k1F1B), Fidelity::kFast);
  const std::string& svg = out.svg;
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("stage 1</text>") != std::string::npos);
  CHECK(svg.find("time (ms)") != std::string::npos);
  // Forward and backward boxes of every micro-batch carry its number.
  for (int mb = 0; mb < 4; ++mb) CHECK(count(svg, ">" + std::to_string(mb) + "</text>") >= 4);
  const Png png = render(svg, "small");
  CHECK(png.width == 1400);
  CHECK(png.height == static_cast<unsigned>(svg_height(svg)));
  CHECK(png.height > 150);
  CHECK(png.bytes > 5000);
}

TEST_CASE("timeline of 64 stages x 512 micro-batches stays within its element budget", "[svg]") {
  // A synthetic 1F1B timeline: forward 1 ms, backward 2 ms, transfers 0.1 ms.
  const int p = 64, m = 512;
  Scenario sc = scenario(a100_cluster(8), gpt_model(64, 1024, 16, 512, 32000),
                         plan(1, p, 1, 1, m, ScheduleKind::k1F1B));
  Timeline tl;
  const double f = 1e-3, b = 2e-3;
  for (int s = 0; s < p; ++s) {
    ActorTimeline a;
    a.stage = s;
    double t = s * f;
    auto add = [&a, &t](IntervalKind kind, double dur, int mb) {
      Interval iv;
      iv.start = t;
      iv.end = t += dur;
      iv.kind = kind;
      iv.microbatch = mb;
      a.intervals.push_back(iv);
    };
    for (int mb = 0; mb < m; ++mb) {
      add(IntervalKind::kPpComm, 1e-4, mb);
      add(IntervalKind::kForward, f, mb);
      add(IntervalKind::kBackward, b, mb);
    }
    add(IntervalKind::kOptimizer, 5e-3, -1);
    tl.step_time_s = std::max(tl.step_time_s, t);
    tl.actors.push_back(a);
  }
  SvgTimelineOptions opt;
  const std::string svg = format_svg_timeline(sc, tl, opt);
  const int elements = count(svg, "<rect") + count(svg, "<text");
  CHECK(elements < opt.max_elements + 200);
  CHECK(count(svg, "stage 63</text>") == 1);
  CHECK(svg.find("F+B too small to tell apart") != std::string::npos);
  const Png png = render(svg, "large");
  CHECK(png.width == 1400);
  CHECK(png.height == static_cast<unsigned>(svg_height(svg)));
  CHECK(png.height > 700);
  CHECK(png.bytes > 20000);

  // A tighter budget merges more, and still draws every row.
  opt.max_elements = 300;
  const std::string tight = format_svg_timeline(sc, tl, opt);
  CHECK(count(tight, "<rect") + count(tight, "<text") < 300 + 200);
  CHECK(count(tight, "stage 63</text>") == 1);
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
