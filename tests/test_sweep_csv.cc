// The sweep CSV (cli/sweep_csv): quoting, splitting and reading rows back.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cli/sweep_csv.h"
#include "core/errors.h"

using namespace trident;

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
