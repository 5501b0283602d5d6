// Checking input without simulating (check_config_file, config/diagnostics): every problem of
// a file, in file order, in referenced files too, up to a limit; one line per message.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config_support.h"

using namespace trident;
using namespace trident::testing;

TEST_CASE("validation lists every problem of a file, in file order", "[validate]") {
  const std::string path = write_temp("many.yaml", kScenarioHead +
                                                       "plan:\n"
                                                       "  tensor_parallel: 0\n"    // 4
                                                       "  pipeline_parallel: x\n"  // 5
                                                       "  micro_batch_size: 1\n"
                                                       "  global_batch_size: 8\n"
                                                       "  schedule: zigzag\n"         // 8
                                                       "  recompute: some\n"          // 9
                                                       "  colour: blue\n"             // 10
                                                       "  pipeline_layers: [a, 2]\n"  // 11
                                                       "  grad_bucket_size: -1\n");   // 12
  const std::vector<std::string> p = problems(path);
  REQUIRE(p.size() == 7);
  CHECK_THAT(p[0], Catch::Contains(":10:3: plan.colour: unknown key `colour`"));
  CHECK_THAT(p[1], Catch::Contains(":4:20: plan.tensor_parallel: 0 is too small"));
  CHECK_THAT(p[2], Catch::Contains(":5:22: plan.pipeline_parallel: `x` is not an integer"));
  CHECK_THAT(p[3], Catch::Contains(":8:13: plan.schedule: unknown value `zigzag` (expected "
                                   "one of: gpipe, 1f1b, interleaved-1f1b)"));
  CHECK_THAT(p[4], Catch::Contains(":9:14: plan.recompute: unknown value `some`"));
  CHECK_THAT(p[5], Catch::Contains(":12:21: plan.grad_bucket_size: -1 is too small"));
  CHECK_THAT(p[6], Catch::Contains(":11:21: plan.pipeline_layers: the value `a` is not a layer"));
  // The loader stops at the first.
  CHECK(load_error(path) == p[0]);
}

TEST_CASE("validation reports every duplicate key and goes on", "[validate][yaml]") {
  const std::string path = write_temp("dups.yaml", kScenarioHead +
                                                       "plan:\n  micro_batch_size: 1\n"
                                                       "  micro_batch_size: 2\n"
                                                       "  num_microbatches: 4\n"
                                                       "  num_microbatches: 8\n"
                                                       "  schedule: nope\n");
  const std::vector<std::string> p = problems(path);
  REQUIRE(p.size() == 3);
  CHECK_THAT(p[0], Catch::Contains(":5:3: plan.micro_batch_size: duplicate key (first given at "
                                   "line 4"));
  CHECK_THAT(p[1], Catch::Contains(":7:3: plan.num_microbatches: duplicate key"));
  CHECK_THAT(p[2], Catch::Contains(":8:13: plan.schedule: unknown value `nope`"));
}

TEST_CASE("problems in referenced files and sections are all found", "[validate]") {
  const std::string cluster = write_temp("c/cluster.yaml",
                                         "name: c\ngpu: ../g/gpu.yaml\nnodes: 0\n"
                                         "gpus_per_node: 8\nnvlink: {bandwidth: 300 GB/s, "
                                         "latency: 2 us}\nnetwork: {nic_bandwidth: 200, "
                                         "latency: 5 us}\n");
  const std::string dir = std::filesystem::path(cluster).parent_path().parent_path().string();
  std::filesystem::create_directories(dir + "/g");
  std::ofstream(dir + "/g/gpu.yaml") << "name: g\npeak_flops: {bf16: 312 TFLOPS}\n"
                                        "memory: 80 GiB\nmemory_bandwidth: 2 us\n";
  std::ofstream(dir + "/s.yaml") << "cluster: c/cluster.yaml\nmodel: missing.yaml\n"
                                    "plan: {micro_batch_size: 0, num_microbatches: 1}\n";
  const std::vector<std::string> p = problems(dir + "/s.yaml");
  REQUIRE(p.size() == 5);
  CHECK_THAT(p[0], Catch::Contains("s.yaml:2:8: model: cannot read `missing.yaml`"));
  CHECK_THAT(p[1], Catch::Contains("g/gpu.yaml:4:19: cluster.gpu.memory_bandwidth: `2 us` is a "
                                   "time, expected a bandwidth"));
  CHECK_THAT(p[2], Catch::Contains("c/cluster.yaml:3:8: cluster.nodes: 0 is too small"));
  CHECK_THAT(p[3], Catch::Contains("c/cluster.yaml:6:26: cluster.network.nic_bandwidth: `200` "
                                   "has no unit"));
  CHECK_THAT(p[4], Catch::Contains("s.yaml:3:26: plan.micro_batch_size: 0 is too small"));
  // A stand-alone cluster file: the same two problems of its own and its GPU's.
  CHECK(problems(cluster).size() == 3);
}

TEST_CASE("validation stops listing after 100 problems", "[validate]") {
  std::string text = kScenarioHead + "plan:\n  micro_batch_size: 1\n  num_microbatches: 1\n";
  for (int i = 0; i < 300; ++i) text += "  bogus" + std::to_string(i) + ": 1\n";
  Diagnostics diag;
  check_config_file(write_temp("many_keys.yaml", text), {}, &diag);
  CHECK(diag.problems().size() == 100);
  CHECK(diag.count() >= 100);
}

TEST_CASE("messages stay on one line and quote long values briefly", "[validate]") {
  CHECK(excerpt("a\nb\tc\x01") == "a\\nb\\tc\\x01");
  CHECK(excerpt(std::string(100, 'x')) == std::string(60, 'x') + "...");
  const std::string path = write_temp("long.yaml", kScenarioHead +
                                                       "plan:\n  micro_batch_size: 1\n"
                                                       "  num_microbatches: 1\n  schedule: \"" +
                                                       std::string(100000, 'z') + "\"\n");
  const std::string e = load_error(path);
  CHECK(e.size() < 400);
  CHECK(e.find('\n') == std::string::npos);
}
