// The SVG timeline (svg_timeline) of simulated steps: it renders with a real SVG renderer,
// labelled, and stays within its element budget at 64 stages x 512 micro-batches.
// Simulations run in child processes (one SimGrid engine per process).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "trace_support.h"

using namespace trident;
using namespace trident::testing;

namespace {

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

}  // namespace

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
