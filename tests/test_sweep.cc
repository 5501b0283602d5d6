// Unit tests of the sweep and compare helpers: point expansion, shards, the sweep CSV, the
// resumable writer, the process pool, variants and the comparison writers.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli/child_runner.h"
#include "cli/compare_variants.h"
#include "cli/sweep_csv.h"
#include "cli/sweep_output.h"
#include "cli/sweep_points.h"
#include "core/errors.h"
#include "report/comparison.h"

using namespace trident;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("trident_sweep_test_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

}  // namespace

TEST_CASE("split_top_level keeps bracketed lists whole", "[sweep]") {
  CHECK(split_top_level("1, 2,4") == std::vector<std::string>{"1", "2", "4"});
  CHECK(split_top_level("[tensor, data, pipeline],[data, tensor, pipeline]") ==
        std::vector<std::string>{"[tensor, data, pipeline]", "[data, tensor, pipeline]"});
  CHECK(split_top_level("\"a,b\",c") == std::vector<std::string>{"\"a,b\"", "c"});
  CHECK(split_top_level("  ").empty());
}

TEST_CASE("'...' expands a doubling range", "[sweep]") {
  CHECK(expand_doubling({"1", "2", "4", "...", "128"}, "x") ==
        std::vector<std::string>{"1", "2", "4", "8", "16", "32", "64", "128"});
  CHECK(expand_doubling({"1", "...", "8"}, "x") == std::vector<std::string>{"1", "2", "4", "8"});
  CHECK(expand_doubling({"3", "...", "24", "100"}, "x") ==
        std::vector<std::string>{"3", "6", "12", "24", "100"});
  CHECK_THROWS_AS(expand_doubling({"...", "8"}, "x"), ConfigError);
  CHECK_THROWS_AS(expand_doubling({"1", "..."}, "x"), ConfigError);
  CHECK_THROWS_AS(expand_doubling({"1", "...", "12"}, "x"), ConfigError);  // not 1 x 2^k
  CHECK_THROWS_AS(expand_doubling({"8", "...", "2"}, "x"), ConfigError);
  CHECK_THROWS_AS(expand_doubling({"a", "...", "8"}, "x"), ConfigError);
}

TEST_CASE("a --vary option parses key and values and checks the key", "[sweep]") {
  const SweepAxis a = parse_vary("plan.num_microbatches=1,2,4,...,32");
  CHECK(a.key == "plan.num_microbatches");
  CHECK(a.values == std::vector<std::string>{"1", "2", "4", "8", "16", "32"});
  CHECK_THROWS_AS(parse_vary("plan.num_microbatches"), ConfigError);
  CHECK_THROWS_AS(parse_vary("plan.num_microbatches="), ConfigError);
  CHECK_THROWS_AS(parse_vary("plan.num_microbatches=1,,2"), ConfigError);
  try {
    parse_vary("plan.tensor_paralel=2,4");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("tensor_parallel") != std::string::npos);  // did you mean
  }
}

TEST_CASE("axes: scenario first, --vary replaces or appends, cartesian order", "[sweep]") {
  const std::vector<SweepAxis> scenario = {{"plan.num_microbatches", {"2", "...", "8"}}};
  const std::vector<SweepAxis> vary = {{"plan.tensor_parallel", {"1", "2"}},
                                       {"plan.num_microbatches", {"16", "32"}}};
  const std::vector<SweepAxis> axes = combine_axes(scenario, vary);
  REQUIRE(axes.size() == 2);
  CHECK(axes[0].key == "plan.num_microbatches");
  CHECK(axes[0].values == std::vector<std::string>{"16", "32"});
  CHECK(axes[1].key == "plan.tensor_parallel");
  CHECK(combine_axes(scenario, {})[0].values == std::vector<std::string>{"2", "4", "8"});
  CHECK_THROWS_AS(combine_axes({}, {vary[0], vary[0]}), ConfigError);

  const std::vector<SweepPoint> points = expand_points(axes);
  REQUIRE(points.size() == 4);
  CHECK(points[1].index == 1);
  CHECK(points[1].values == std::vector<std::string>{"16", "2"});
  CHECK(points[2].values == std::vector<std::string>{"32", "1"});
  CHECK(point_overrides(axes, points[3]) ==
        std::vector<std::string>{"plan.num_microbatches=32", "plan.tensor_parallel=2"});
  CHECK(expand_points({}).empty());
}

TEST_CASE("shards partition the points", "[sweep]") {
  const std::vector<SweepPoint> points =
      expand_points({{"plan.num_microbatches", {"1", "2", "3", "4", "5", "6", "7"}}});
  std::set<int> seen;
  for (int i = 0; i < 3; ++i) {
    for (const SweepPoint& p : select_shard(points, parse_shard(std::to_string(i) + "/3"))) {
      CHECK(p.index % 3 == i);
      CHECK(seen.insert(p.index).second);
    }
  }
  CHECK(seen.size() == points.size());
  for (const char* bad : {"3/3", "1", "-1/2", "a/2", "0/0", "1/"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_shard(bad), ConfigError);
  }
}

TEST_CASE("sweep CSV quotes, splits and reads back", "[sweep]") {
  CHECK(csv_field("ok") == "ok");
  CHECK(csv_field("[data, tensor]") == "\"[data, tensor]\"");
  CHECK(csv_field("say \"hi\"\nthere") == "\"say \"\"hi\"\" there\"");
  std::vector<std::string> f;
  REQUIRE(split_csv_line("1,\"[a, b]\",,\"x\"\"y\"", &f));
  CHECK(f == std::vector<std::string>{"1", "[a, b]", "", "x\"y"});
  CHECK_FALSE(split_csv_line("1,\"open", &f));

  const std::vector<SweepAxis> axes = {{"plan.placement", {"[tensor, data, pipeline]"}}};
  const std::string header = sweep_header(axes, "a,b\n");
  CHECK(header == "point,plan.placement,a,b,status\n");
  SweepPoint p{0, {"[tensor, data, pipeline]"}};
  const std::string ok = sweep_row(p, "1,2", 2, "ok");
  CHECK(ok == "0,\"[tensor, data, pipeline]\",1,2,ok\n");
  p.index = 1;
  const std::string bad = sweep_row(p, "", 2, "error: x, y");
  CHECK(bad == "1,\"[tensor, data, pipeline]\",,,\"error: x, y\"\n");

  const SweepFileContent c = parse_sweep_file(header + ok + bad + "2,\"[te", "f.csv");
  CHECK(c.torn);
  CHECK(c.header == header);
  REQUIRE(c.rows.size() == 2);
  CHECK(c.rows[1].index == 1);
  CHECK(c.rows[1].fields[1] == "[tensor, data, pipeline]");
  CHECK(c.complete_bytes == (header + ok + bad).size());
  CHECK_THROWS_AS(parse_sweep_file("a,b\n", "f.csv"), ConfigError);
  CHECK_THROWS_AS(parse_sweep_file(header + "0,1\n", "f.csv"), ConfigError);
}

TEST_CASE("SweepOutput writes in point order and resumes", "[sweep]") {
  const std::vector<SweepAxis> axes = {{"plan.num_microbatches", {"1", "2", "3", "4"}}};
  const std::vector<SweepPoint> points = expand_points(axes);
  const std::string header = sweep_header(axes, "x\n");
  auto row = [&](size_t i) { return sweep_row(points[i], std::to_string(i * 10), 1, "ok"); };
  const std::string full = header + row(0) + row(1) + row(2) + row(3);
  const std::string path = temp_path("out.csv");

  {
    SweepOutput out(path, header, points, false);
    out.add(2, row(2));
    out.add(1, row(1));
    CHECK(slurp(path) == header);  // point 0 still missing: nothing after the header
    out.add(0, row(0));
    CHECK(slurp(path) == header + row(0) + row(1) + row(2));
    out.add(3, row(3));
    out.finish();
  }
  CHECK(slurp(path) == full);

  // A killed run: a prefix and a torn line; resume keeps the prefix and cuts the tear.
  std::ofstream(path, std::ios::binary) << header << row(0) << row(1) << "2,3,2";
  {
    SweepOutput out(path, header, points, true);
    CHECK(out.resumed() == 2);
    CHECK(out.has_row(1));
    CHECK_FALSE(out.has_row(2));
    out.add(3, row(3));
    out.add(2, row(2));
    out.finish();
  }
  CHECK(slurp(path) == full);

  // Rows with a gap (edited by hand): rebuilt through a temporary file.
  std::ofstream(path, std::ios::binary) << header << row(0) << row(2);
  {
    SweepOutput out(path, header, points, true);
    CHECK(out.resumed() == 2);
    out.add(1, row(1));
    out.add(3, row(3));
    CHECK(slurp(path) == header + row(0) + row(2));  // untouched until finished
    out.finish();
  }
  CHECK(slurp(path) == full);
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));

  // A file from another sweep is refused.
  std::ofstream(path, std::ios::binary) << sweep_header(axes, "y\n");
  CHECK_THROWS_AS(SweepOutput(path, header, points, true), ConfigError);
  std::ofstream(path, std::ios::binary) << header << "0,7,0,ok\n";
  CHECK_THROWS_AS(SweepOutput(path, header, points, true), ConfigError);
  std::filesystem::remove(path);
}

TEST_CASE("run_children runs commands in parallel and reports each", "[sweep][process]") {
  std::vector<std::vector<std::string>> commands;
  for (int i = 0; i < 5; ++i) {
    commands.push_back({"/bin/sh", "-c",
                        "echo out" + std::to_string(i) + "; echo 'trident: bad " +
                            std::to_string(i) + "' >&2; exit " + std::to_string(i % 3)});
  }
  commands.push_back({"/nonexistent/program"});
  commands.push_back({"/bin/sh", "-c", "kill -9 $$"});
  std::vector<ChildResult> results(commands.size());
  std::vector<int> calls(commands.size(), 0);
  run_children(commands, 3, [&](size_t i, const ChildResult& r) {
    results[i] = r;
    ++calls[i];
  });
  for (size_t i = 0; i < commands.size(); ++i) CHECK(calls[i] == 1);
  CHECK(results[0].ok());
  CHECK(results[0].out == "out0\n");
  CHECK(results[1].exit_code == 1);
  CHECK(results[1].failure() == "bad 1");
  CHECK(results[5].exit_code == 127);
  CHECK(results[5].failure().find("cannot execute") != std::string::npos);
  CHECK(results[6].signal == 9);
  CHECK(results[6].failure() == "killed by signal 9");
  CHECK(available_cpus() >= 1);
}

TEST_CASE("variants parse names and overrides", "[compare]") {
  const Variant v =
      parse_variant("inter:plan.placement=[data, tensor, pipeline],plan.data_parallel=2");
  CHECK(v.name == "inter");
  CHECK(v.overrides == std::vector<std::string>{"plan.placement=[data, tensor, pipeline]",
                                                "plan.data_parallel=2"});
  CHECK(parse_variant("plan.tensor_parallel=4").name == "plan.tensor_parallel=4");
  CHECK(parse_variant("base:").overrides.empty());
  CHECK_THROWS_AS(parse_variant(":plan.tensor_parallel=4"), ConfigError);
  CHECK_THROWS_AS(parse_variant("x:plan.tensor_parallel"), ConfigError);
  CHECK_THROWS_AS(parse_variant("x:plan.tensorparallel=4"), ConfigError);
}

TEST_CASE("inter-node TP placement spreads TP ranks over islands", "[compare]") {
  ClusterSpec cluster;
  cluster.gpus_per_node = 8;
  cluster.nvlink.island_size = 8;
  PlanSpec plan;
  plan.tensor = 8;
  plan.pipeline = 1;
  plan.data = 8;
  CHECK(placement_text(inter_node_tp_placement(plan, cluster)) == "[data, tensor, pipeline]");
  plan.data = 2;
  plan.pipeline = 8;
  CHECK(placement_text(inter_node_tp_placement(plan, cluster)) == "[pipeline, tensor, data]");
  plan.pipeline = 2;
  CHECK(placement_text(inter_node_tp_placement(plan, cluster)) == "[data, pipeline, tensor]");
  const std::vector<Variant> vs = tp_placement_variants("intra,inter", plan, cluster);
  REQUIRE(vs.size() == 2);
  CHECK(vs[0].overrides[0] == "plan.placement=[tensor, data, pipeline]");
  CHECK(vs[1].name == "inter");
  CHECK_THROWS_AS(tp_placement_variants("intra,across", plan, cluster), ConfigError);
  CHECK_THROWS_AS(tp_placement_variants("intra,intra", plan, cluster), ConfigError);
}

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
