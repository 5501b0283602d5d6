// Names that are not valid UTF-8 or hold control characters (a 0xFF byte, NUL, U+0001 in a
// model name) reach the JSON report, the trace, the SVG timeline and CSV rows as U+FFFD, so each
// output stays valid (issue 13 item 14: nlohmann's type_error.316 after simulating, and
// invalid XML). Whether such names are accepted at all is the loader's business; the writers
// never fail on them.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "core/isolated_run.h"
#include "core/utf8.h"
#include "engine/simulator.h"
#include "layout/program.h"
#include "report/metrics.h"
#include "report/svg_timeline.h"
#include "report/trace_writer.h"
#include "report/writers.h"
#include "test_support.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

const std::string kHostile = std::string("m\xFF") + '\0' + "\x01<&\">\xC3" + "\xE2\x82";

}  // namespace

TEST_CASE("sanitize_utf8 keeps valid text and replaces the rest", "[report][utf8]") {
  CHECK(sanitize_utf8("plain, tab\tnew\nline") == "plain, tab\tnew\nline");
  CHECK(sanitize_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x9A\x80") ==
        "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x9A\x80");
  const std::string r = "\xEF\xBF\xBD";
  CHECK(sanitize_utf8("a\xFF"
                      "b") == "a" + r + "b");
  CHECK(sanitize_utf8(std::string("a\0b", 3)) == "a" + r + "b");
  CHECK(sanitize_utf8("\x01") == r);
  CHECK(sanitize_utf8("\xC0\xAF") == r + r);          // overlong
  CHECK(sanitize_utf8("\xED\xA0\x80") == r + r + r);  // surrogate
  CHECK(sanitize_utf8("\xE2\x82") == r + r);          // truncated
  CHECK(sanitize_utf8(sanitize_utf8(kHostile)) == sanitize_utf8(kHostile));
}

TEST_CASE("hostile names give valid JSON, trace, SVG and CSV", "[report][utf8][trace]") {
  Scenario sc = scenario(a100_cluster(1), gpt_model(4, 512, 8, 256, 8000),
                         plan(2, 2, 2, 1, 4, ScheduleKind::k1F1B));
  sc.model.name = kHostile;
  sc.cluster.name = kHostile;
  sc.path = kHostile + ".yaml";
  const std::string sep = "\x1e\x1e";
  const std::string all = run_isolated([&]() {
    const Workload w = build_workload(sc);
    const std::vector<StageProgram> programs = build_programs(sc.plan);
    SimOptions opt;
    opt.record_intervals = true;
    const Timeline tl = simulate_step(sc, w, programs, opt);
    const Report r = make_report(sc, w, tl, "fast");
    return format_report(r, ReportFormat::kJson) + sep + format_trace(sc, w, tl) + sep +
           format_svg_timeline(sc, tl) + sep + format_report(r, ReportFormat::kCsv);
  });
  const size_t a = all.find(sep), b = all.find(sep, a + 2), c = all.find(sep, b + 2);
  REQUIRE(c != std::string::npos);
  const std::string report = all.substr(0, a), trace = all.substr(a + 2, b - a - 2),
                    svg = all.substr(b + 2, c - b - 2), csv = all.substr(c + 2);
  const nlohmann::json j = nlohmann::json::parse(report);
  CHECK(j["model"].get<std::string>().rfind("m\xEF\xBF\xBD", 0) == 0);
  CHECK_NOTHROW(j.dump());  // strict: valid UTF-8 throughout
  const nlohmann::json t = nlohmann::json::parse(trace);
  CHECK(t["otherData"]["model"].get<std::string>().rfind("m\xEF\xBF\xBD", 0) == 0);
  CHECK_NOTHROW(t.dump());
  for (const std::string* text : {&report, &trace, &svg, &csv}) {
    CHECK(sanitize_utf8(*text) == *text);  // valid UTF-8, no stray control characters
  }
  CHECK(svg.find("<&") == std::string::npos);
  CHECK(svg.find("&lt;&amp;&quot;&gt;") != std::string::npos);
}
