// Comparison writers (report/comparison): ratios, shares and errors in table, CSV and JSON.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "report/comparison.h"

using namespace trident;

TEST_CASE("comparison writers show ratios, shares and errors", "[compare]") {
  ComparedVariant a, b, c;
  a.name = "intra";
  a.report.model = "m";
  a.report.cluster = "c";
  a.report.step_time_s = 2;
  a.report.tp_comm_exposed_s = 0.2;
  b.name = "inter";
  b.report = a.report;
  b.report.step_time_s = 3;
  b.report.tp_comm_exposed_s = 1.2;
  c.name = "broken";
  c.error = "simulation failed: boom";
  const std::vector<ComparedVariant> vs = {a, b, c};
  const std::string table = format_comparison(vs, "s.yaml", ReportFormat::kTable);
  CHECK(table.find("1.50x") != std::string::npos);
  CHECK(table.find("40.0 %") != std::string::npos);  // inter's TP share: 1.2 / 3
  CHECK(table.find("broken: error: simulation failed: boom") != std::string::npos);
  const std::string csv = format_comparison(vs, "s.yaml", ReportFormat::kCsv);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 4);
  CHECK(csv.find("variant,overrides,step_time_s,") == 0);
  CHECK(csv.find(",1.5,ok\n") != std::string::npos);
  const std::string json = format_comparison(vs, "s.yaml", ReportFormat::kJson);
  const nlohmann::json j = nlohmann::json::parse(json);
  CHECK(j["variants"][1]["step_time_ratio"].get<double>() == Approx(1.5));
  CHECK(j["variants"][1]["tp_comm_share"].get<double>() == Approx(0.4));
  CHECK(j["variants"][2]["status"] == "error");
  CHECK(comm_share(1, 0) == 0);
  CHECK_THROWS_AS(parse_report_json("{}"), std::runtime_error);
}
