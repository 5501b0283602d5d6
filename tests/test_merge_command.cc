// End-to-end tests of `trident merge`: three shards of a sweep merged back equal the unsharded
// sweep byte for byte.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_output.h"
#include "cli_runner.h"

using namespace trident::testing;
namespace fs = std::filesystem;
using Result = CliResult;

namespace {

std::string slurp(const std::string& path) { return read_file(path); }

}  // namespace

TEST_CASE("three shards merged equal the unsharded sweep byte for byte", "[sweep][cli][shard]") {
  const std::string dir = scratch("shard");
  const std::vector<std::string> sweep = {"sweep", "scenarios/tiny.yaml", "--vary",
                                          "plan.num_microbatches=1,2,4,...,64"};
  std::vector<std::string> whole = sweep;
  whole.insert(whole.end(), {"--out", dir + "/all.csv"});
  REQUIRE(run_trident(whole).code == 0);
  std::vector<std::string> merge = {"merge"};
  for (int i = 2; i >= 0; --i) {  // any order of files
    std::vector<std::string> shard = sweep;
    const std::string file = dir + "/shard" + std::to_string(i) + ".csv";
    shard.insert(shard.end(), {"--shard", std::to_string(i) + "/3", "--out", file});
    const Result r = run_trident(shard);
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(count_lines(slurp(file)) == 1 + (i < 1 ? 3u : 2u));  // 7 points: 3, 2, 2
    merge.push_back(file);
  }
  const Result merged = run_trident(merge);
  INFO(merged.err);
  REQUIRE(merged.code == 0);
  CHECK(merged.out == slurp(dir + "/all.csv"));

  // A missing shard or a torn one is an error, not a silently short file.
  const Result missing = run_trident({"merge", dir + "/shard0.csv", dir + "/shard2.csv"});
  CHECK(missing.code == 2);
  CHECK(missing.err.find("points missing") != std::string::npos);
  const std::string torn = slurp(dir + "/shard1.csv");
  std::ofstream(dir + "/shard1.csv", std::ios::binary) << torn.substr(0, torn.size() - 5);
  const Result bad = run_trident(merge);
  CHECK(bad.code == 2);
  CHECK(bad.err.find("incomplete") != std::string::npos);
  fs::remove_all(dir);
}
