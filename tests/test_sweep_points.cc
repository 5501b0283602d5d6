// Sweep points (cli/sweep_points): list splitting, doubling ranges, --vary axes, their
// cartesian order, and shards that partition the points.
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli/sweep_points.h"
#include "core/errors.h"

using namespace trident;

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
