// The metric table (report/metric_table): every report key declared once, read back equal by
// every reader (the compare JSON reader, the comparison's JSON and CSV, the plan child line,
// the plan JSON), and docs/report.md generated from it.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/plan_output.h"
#include "cli/sweep_csv.h"
#include "report/comparison.h"
#include "report/metric_table.h"
#include "report/plan_label.h"
#include "report/writers.h"
#include "search/plan_space.h"

using namespace trident;
using Json = nlohmann::ordered_json;

namespace {

// A report whose every metric holds its own value, none of them a default: metric i is
// 1000 + i (integers), 0.5 + i + 1/3 (reals), "text <i>" (names), false (fits_in_memory's
// default is true).
Report distinct_report() {
  Report r;
  int i = 0;
  for (const Metric& m : report_metrics()) {
    ++i;
    std::visit(
        [&](auto f) {
          using T = std::decay_t<decltype(r.*f)>;
          if constexpr (std::is_same_v<T, std::string>) {
            r.*f = "text " + std::to_string(i);
          } else if constexpr (std::is_same_v<T, bool>) {
            r.*f = false;
          } else if constexpr (std::is_same_v<T, double> ||
                               std::is_same_v<T, std::optional<double>>) {
            r.*f = 0.5 + i + 1.0 / 3;
          } else {
            r.*f = 1000 + i;
          }
        },
        m.field);
  }
  return r;
}

std::string repo(const std::string& path) { return std::string(TRIDENT_SOURCE_DIR) + "/" + path; }

}  // namespace

TEST_CASE("every report metric has one key, a unit, a doc and a field of its own", "[report]") {
  std::set<std::string> keys;
  std::set<std::string> fields;
  for (const Metric& m : report_metrics()) {
    CAPTURE(m.key);
    CHECK(keys.insert(m.key).second);
    CHECK(std::string(m.unit).size() > 0);
    CHECK(std::string(m.doc).size() > 10);
    CHECK(&find_metric(m.key) == &m);
  }
  CHECK_THROWS_AS(find_metric("no_such_key"), std::out_of_range);
  // Distinct fields: no two keys read the same member.
  const Report r = distinct_report();
  std::set<std::string> values;
  for (const Metric& m : report_metrics()) values.insert(metric_json(m, r).dump());
  CHECK(values.size() == report_metrics().size());
}

TEST_CASE("simulate's JSON holds every metric in table order and compare reads each back equal",
          "[report]") {
  const Report r = distinct_report();
  const Json j = Json::parse(format_json(r));
  std::vector<std::string> top;
  for (const auto& [key, value] : j.items()) {
    if (!value.is_object() && !value.is_array()) top.push_back(key);
  }
  std::vector<std::string> table;
  for (const Metric& m : report_metrics()) table.push_back(m.key);
  CHECK(top == table);

  const Report back = parse_report_json(format_json(r));
  for (const Metric& m : report_metrics()) {
    CAPTURE(m.key);
    CHECK(metric_json(m, back) == metric_json(m, r));
    CHECK(metric_json(m, back) == j.at(m.key));
  }
  // Unset optionals (null) read back unset.
  Report plain = r;
  plain.train_tokens.reset();
  plain.cost.reset();
  const Report again = parse_report_json(format_json(plain));
  CHECK(!again.train_tokens);
  CHECK(!again.cost);
  CHECK(again.train_days == r.train_days);
  // A report missing a key is not a report.
  Json missing = j;
  missing.erase("context_parallel");
  CHECK_THROWS_AS(parse_report_json(missing.dump()), std::runtime_error);
}

TEST_CASE("the CSV row has one field per CSV metric, each as metric_csv writes it", "[report]") {
  const Report r = distinct_report();
  std::vector<std::string> header, row;
  std::string h = csv_header(), v = csv_row(r);
  h.pop_back();
  v.pop_back();
  REQUIRE(split_csv_line(h, &header));
  REQUIRE(split_csv_line(v, &row));
  REQUIRE(header.size() == row.size());
  size_t i = 0;
  for (const Metric& m : report_metrics()) {
    if (!m.csv) continue;
    CAPTURE(m.key);
    REQUIRE(i < header.size());
    CHECK(header[i] == m.key);
    CHECK(row[i] == metric_csv(m, r));
    ++i;
  }
  CHECK(i == header.size());
  CHECK(h.find("context_parallel,data_parallel,expert_parallel") != std::string::npos);
}

TEST_CASE("the comparison's JSON and CSV give every metric of each variant's report",
          "[report][compare]") {
  ComparedVariant a, b;
  a.name = "a";
  a.report = distinct_report();
  b.name = "b";
  b.error = "boom";
  const std::vector<ComparedVariant> vs = {a, b};
  const Json j = Json::parse(format_comparison(vs, "s.yaml", ReportFormat::kJson));
  const Json& va = j.at("variants").at(0);
  for (const Metric& m : report_metrics()) {
    CAPTURE(m.key);
    CHECK(va.at(m.key) == metric_json(m, a.report));
  }
  for (const char* kind : {"tp", "pp", "dp", "cp", "ep"}) {
    const std::string key = std::string(kind) + "_comm_exposed_s";
    CHECK(va.at(std::string(kind) + "_comm_share").get<double>() ==
          Approx(va.at(key).get<double>() / a.report.step_time_s));
  }

  const std::string csv = format_comparison(vs, "s.yaml", ReportFormat::kCsv);
  std::istringstream in(csv);
  std::string line;
  std::vector<std::string> header, row, error_row;
  std::getline(in, line);
  REQUIRE(split_csv_line(line, &header));
  std::getline(in, line);
  REQUIRE(split_csv_line(line, &row));
  std::getline(in, line);
  REQUIRE(split_csv_line(line, &error_row));
  REQUIRE(row.size() == header.size());
  CHECK(error_row.size() == header.size());  // the failed variant's fields are all there
  CHECK(error_row.back() == "error: boom");
  for (const Metric& m : report_metrics()) {
    if (!m.csv) continue;
    CAPTURE(m.key);
    const auto at = std::find(header.begin(), header.end(), m.key);
    REQUIRE(at != header.end());
    CHECK(row[at - header.begin()] == metric_csv(m, a.report));
  }
  CHECK(csv.find(",cp_comm_share,ep_comm_share,step_time_ratio,status\n") != std::string::npos);
}

TEST_CASE("the comparison table shows CP and EP rows and the plan label", "[report][compare]") {
  ComparedVariant dense, cp;
  dense.name = "dense";
  dense.report.step_time_s = 2;
  dense.report.tensor = 8;
  dense.report.data = 2;
  cp = dense;
  cp.name = "cp";
  cp.report.context = 2;
  cp.report.cp_comm_exposed_s = 0.5;
  const std::string plain = format_comparison({dense}, "s.yaml", ReportFormat::kTable);
  CHECK(plain.find("t=8 p=1 d=2") != std::string::npos);
  CHECK(plain.find("exposed CP comm") == std::string::npos);
  CHECK(plain.find("exposed EP comm") == std::string::npos);
  const std::string both = format_comparison({dense, cp}, "s.yaml", ReportFormat::kTable);
  CHECK(both.find("t=8 cp=2 p=1 d=2") != std::string::npos);
  CHECK(both.find("exposed CP comm") != std::string::npos);
  CHECK(both.find("0.5000 s") != std::string::npos);
  CHECK(both.find("25.0 %") != std::string::npos);  // 0.5 of a 2 s step

  ComparedVariant moe = dense;
  moe.name = "moe";
  moe.report.expert_parallel = 8;
  moe.report.ep_comm_exposed_s = 0.25;
  moe.report.tokens_per_expert_max = 100;
  const std::string experts = format_comparison({moe}, "s.yaml", ReportFormat::kTable);
  CHECK(experts.find("t=8 p=1 d=2 ep=8") != std::string::npos);
  CHECK(experts.find("exposed EP comm") != std::string::npos);
  CHECK(experts.find("0.2500 s") != std::string::npos);
}

TEST_CASE("the plan metrics round-trip through the child's line and the plan JSON",
          "[report][plan]") {
  const Report r = distinct_report();
  PlanResult decoded;
  REQUIRE(decode_plan_metrics(encode_plan_metrics(r), &decoded));
  Json plan = Json::object();
  for (const Metric* m : plan_metrics()) {
    CAPTURE(m->key);
    CHECK(metric_json(*m, decoded.report) == metric_json(*m, r));
    plan[m->key] = metric_json(*m, r);
  }
  PlanResult from_json;
  read_plan_metrics(plan, &from_json);
  for (const Metric* m : plan_metrics()) {
    CHECK(metric_json(*m, from_json.report) == metric_json(*m, r));
  }
  CHECK_FALSE(decode_plan_metrics("1 2 3", &decoded));
  CHECK_FALSE(decode_plan_metrics(encode_plan_metrics(r) + " 4", &decoded));
  CHECK_FALSE(decode_plan_metrics("x" + encode_plan_metrics(r), &decoded));
  plan.erase("cp_comm_exposed_s");
  CHECK_THROWS_AS(read_plan_metrics(plan, &from_json), nlohmann::json::exception);
}

TEST_CASE("one plan label: t, cp and ep only above 1, p, d", "[report][plan]") {
  CHECK(plan_label(8, 1, 4, 2, 1) == "t=8 p=4 d=2");
  CHECK(plan_label(8, 2, 4, 2, 1) == "t=8 cp=2 p=4 d=2");
  CHECK(plan_label(1, 1, 1, 64, 8) == "t=1 p=1 d=64 ep=8");
  CHECK(plan_label(2, 4, 2, 8, 16) == "t=2 cp=4 p=2 d=8 ep=16");
  Report r;
  r.tensor = 4;
  r.context = 2;
  r.pipeline = 2;
  r.data = 3;
  r.expert_parallel = 6;
  CHECK(plan_label(r) == "t=4 cp=2 p=2 d=3 ep=6");
  PlanSpec p;
  p.tensor = 4;
  p.context = 2;
  p.pipeline = 2;
  p.data = 3;
  p.expert_parallel = 6;
  CHECK(plan_label(p) == plan_label(r));
  // The plan search's candidates start with it.
  Candidate c;
  c.plan = p;
  CHECK(candidate_label(c).rfind(plan_label(p) + " mbs=", 0) == 0);
  // The table's plan line uses it.
  CHECK(format_table(r).find("  plan: t=4 cp=2 p=2 d=3 ep=6 (") != std::string::npos);
}

TEST_CASE("docs/report.md is the markdown form of the metric table", "[report][report-doc]") {
  const std::string expected = report_metrics_markdown();
  if (std::getenv("TRIDENT_WRITE_DOCS") != nullptr) {
    std::ofstream(repo("docs/report.md"), std::ios::binary) << expected;
  }
  std::ifstream in(repo("docs/report.md"), std::ios::binary);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  // Regenerate with: TRIDENT_WRITE_DOCS=1 build/trident_tests '[report-doc]'
  CHECK(text.str() == expected);
  for (const Metric& m : report_metrics()) {
    CHECK(text.str().find(std::string("| `") + m.key + "` |") != std::string::npos);
  }
}
