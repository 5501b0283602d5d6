// Limits on hostile input (config/limits.h): huge files, bracket floods, deep nesting and
// oversized plans are refused quickly, with the limit named.
#include <time.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config/yaml_tree.h"
#include "config_support.h"
#include "lowering/shortcuts.h"

using namespace trident;
using namespace trident::testing;

namespace {

// CPU seconds this thread spends in `f`: the work the loader does, which a loaded machine does
// not stretch as it stretches wall-clock time (the bounds below are 10-100x what it takes).
template <typename F>
double seconds(F&& f) {
  const auto now = [] {
    timespec ts{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
  };
  const double start = now();
  f();
  return now() - start;
}

}  // namespace

TEST_CASE("hostile input is refused quickly with the limit named", "[validate][limits]") {
  // A file over 1 MiB is refused from its size, before it is read.
  const std::string huge = write_temp("huge.yaml", std::string(17 << 20, '#'));
  std::string message;
  CHECK(seconds([&] { message = load_error(huge); }) < 2);
  CHECK_THAT(message, Catch::Contains("more than the limit of 1 MiB for a configuration file"));
  // A device without a size is read only up to the limit.
  CHECK_THAT(load_error("/dev/zero"), Catch::Contains("/dev/zero: file is larger than the limit "
                                                      "of 1 MiB"));

  // Just under the size limit, a flood of flow brackets (which yaml-cpp would queue as
  // possible keys, hundreds of bytes each) is refused before parsing; a flat list of the
  // same size parses within a second.
  const std::string flood = write_temp("flood.yaml", std::string("[\n").append((1 << 20) - 8, '['));
  CHECK(seconds([&] {
          CHECK_THAT(load_error(flood), Catch::Contains(":2:256: more than 256 unclosed '[' or "
                                                        "'{' (maps and lists nested deeper"));
        }) < 1);
  std::string flat = "[";
  while (flat.size() < (1 << 20) - 16) flat += "a, ";
  const std::string flat_file = write_temp("flat.yaml", flat + "a]");
  CHECK(seconds([&] { CHECK_THAT(load_error(flat_file), Catch::Contains("100000 values")); }) < 3);

  // Billion laughs: ten aliases of ten aliases ... expand to 10^9 values.
  std::string laughs = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 10; ++i) {
    laughs += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) laughs += (j ? ", *a" : "*a") + std::to_string(i - 1);
    laughs += "]\n";
  }
  CHECK(seconds([&] {
          CHECK_THROWS_WITH(parse_yaml(laughs, "laughs.yaml"),
                            Catch::Contains("more than 100000 values (aliases expanded)"));
        }) < 5);

  // Deep nesting, directly or through aliases.
  CHECK_THROWS_WITH(parse_yaml("a: " + std::string(200, '[') + std::string(200, ']'), "d.yaml"),
                    Catch::Contains("nested more than 64 levels deep"));
  std::string chain = "a0: &a0 [[[[[[[[[[x]]]]]]]]]]\n";
  for (int i = 1; i < 10; ++i) {
    chain += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [[[[[[[[[*a" +
             std::to_string(i - 1) + "]]]]]]]]]\n";
  }
  CHECK_THROWS_WITH(parse_yaml(chain, "chain.yaml"), Catch::Contains("nested more than 64"));

  // A map with many keys is checked in linear time.
  std::string wide = "{";
  for (int i = 0; i < 40000; ++i) wide += "k" + std::to_string(i) + ": 1, ";
  wide += "k0: 2}";
  CHECK(seconds([&] {
          CHECK_THROWS_WITH(parse_yaml(wide, "wide.yaml"), Catch::Contains("k0: duplicate key"));
        }) < 10);

  // A billion-layer model, and plans that would keep the engine busy for hours.
  const std::string scenario = repo("scenarios/gpt3-175b-3d.yaml");
  CHECK_THAT(load_error(scenario, {"model.num_layers=1000000000"}),
             Catch::Contains("1000000000 exceeds the limit of 100000"));
  CHECK_THAT(load_error(scenario, {"cluster.nodes=1000000"}),
             Catch::Contains("cluster has 8000000 GPUs (nodes × gpus_per_node), more than the "
                             "limit of 1000000"));
  CHECK_THAT(load_error(scenario, {"plan.num_microbatches=9000000"}),
             Catch::Contains("more than the schedule-instruction limit of 10000000"));
  // The activity limit counts what the fidelity simulates, so `simulate` checks it once the
  // shortcuts are known (lowering/shortcuts.h): fast fidelity runs these 100,000 micro-batches
  // on one replica per stage, full fidelity on every GPU.
  const Scenario busy = load_scenario(scenario, {"plan.num_microbatches=100000"});
  CHECK(simulation_activity_issues(busy, Fidelity::kFast).empty());
  CHECK_THROWS_WITH(check_simulation_activities(busy, Fidelity::kFull),
                    Catch::Contains("more than the simulation-activity limit of 100000000"));
}
