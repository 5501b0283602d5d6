// trident collective --op all-to-all --dispatcher flex: one DeepEP dispatch, simulated, with
// DeepEP's bottleneck bandwidths; its options are checked.
#include <cmath>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

using trident::testing::run_trident;
using Json = nlohmann::json;

TEST_CASE("trident collective times a flex dispatch over two nodes", "[cli][collective][flex]") {
  const trident::testing::CliResult r =
      run_trident({"collective", "--cluster", "dgx-h100", "--nodes", "2", "--op", "all-to-all",
                   "--dispatcher", "flex", "--experts", "256", "--topk", "8", "--format", "json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const Json j = Json::parse(r.out);
  CHECK(j["gpus"] == 16);
  CHECK(j["islands"] == 2);
  // Balanced top-8 of 256: 1 - C(128, 8) / C(256, 8) per node, 1 - C(240, 8) / C(256, 8) per
  // GPU.
  double miss_node = 1, miss_gpu = 1;
  for (int i = 0; i < 8; ++i) {
    miss_node *= (128.0 - i) / (256 - i);
    miss_gpu *= (240.0 - i) / (256 - i);
  }
  CHECK(j["islands_per_token"].get<double>() == Approx(2 * (1 - miss_node)).epsilon(1e-9));
  CHECK(j["gpus_per_token"].get<double>() == Approx(16 * (1 - miss_gpu)).epsilon(1e-9));
  // The RDMA figure counts every destination node's tokens over the time.
  const double rdma_bytes = 4096.0 * 7168 * 2 * 2 * (1 - miss_node);
  CHECK(j["rdma_gbps"].get<double>() ==
        Approx(rdma_bytes / (j["time_us"].get<double>() * 1e-6) / 1e9).epsilon(1e-6));
  CHECK(j["bottleneck_gbps"] == j["rdma_gbps"]);
}

TEST_CASE("trident collective --dispatcher checks its options", "[cli][collective][flex]") {
  const auto code = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {"collective", "--cluster", "dgx-h100", "--nodes", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_trident(args);
  };
  const auto bad_op = code({"--op", "all-reduce", "--dispatcher", "flex"});
  CHECK(bad_op.code == 2);
  CHECK_THAT(bad_op.err, Catch::Contains("--dispatcher flex needs --op all-to-all"));
  const auto bad_name = code({"--op", "all-to-all", "--dispatcher", "deepep"});
  CHECK(bad_name.code == 2);
  const auto bad_experts = code({"--op", "all-to-all", "--dispatcher", "flex", "--experts", "12"});
  CHECK(bad_experts.code == 2);
  CHECK_THAT(bad_experts.err, Catch::Contains("multiple of the 8 GPUs"));
  const auto bad_groups =
      code({"--op", "all-to-all", "--dispatcher", "flex", "--groups", "8", "--group-topk", "9"});
  CHECK(bad_groups.code == 2);
}
