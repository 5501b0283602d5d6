// `trident plan --shard I/N --format csv` + `trident merge`: the merged shards are the
// unsharded search's CSV, byte for byte, and shards of different searches do not merge.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_runner.h"

using namespace trident::testing;

namespace {

std::string plan_csv(std::vector<std::string> args) {
  args.insert(args.begin(), "plan");
  args.insert(args.end(), {"--format", "csv", "--jobs", "2"});
  const CliResult r = run_trident(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return r.out;
}

// Writes `text` to a fresh temporary file and returns its path.
std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path =
      (std::filesystem::temp_directory_path() /
       ("trident_plan_merge_" + std::to_string(::getpid()) + "_" + name + ".csv"))
          .string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

CliResult merge(const std::vector<std::string>& files) {
  std::vector<std::string> args = {"merge"};
  args.insert(args.end(), files.begin(), files.end());
  return run_trident(args);
}

}  // namespace

TEST_CASE("trident merge of plan shards 0/3 1/3 2/3 is the unsharded plan CSV") {
  // A scenario (so the `given` row is merged too) and a top larger than some shards prove on
  // their own; then a bare cluster/model search.
  const std::vector<std::vector<std::string>> searches = {
      {"scenarios/tiny.yaml", "--top", "7"},
      {"--cluster", "tiny-2node", "--model", "gpt-1.7b", "--global-batch", "32", "--top", "4"}};
  for (const std::vector<std::string>& search : searches) {
    const std::string whole = plan_csv(search);
    std::vector<std::string> files;
    for (int i = 0; i < 3; ++i) {
      std::vector<std::string> args = search;
      args.insert(args.end(), {"--shard", std::to_string(i) + "/3"});
      const std::string shard = plan_csv(args);
      CHECK(shard.find("# trident plan shard " + std::to_string(i) + "/3 top") !=
            std::string::npos);
      files.push_back(temp_file(std::to_string(i), shard));
    }
    // Any file order.
    const CliResult r = merge({files[2], files[0], files[1]});
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(r.out == whole);
    for (const std::string& f : files) std::filesystem::remove(f);
  }
}

TEST_CASE("trident merge refuses plan shards that are missing or from another search") {
  const std::vector<std::string> search = {"--cluster", "tiny-2node",     "--model",
                                           "gpt-1.7b",  "--global-batch", "32"};
  auto shard = [&](const std::string& which, const std::string& top) {
    std::vector<std::string> args = search;
    args.insert(args.end(), {"--top", top, "--shard", which});
    return temp_file(which.substr(0, 1) + "_" + top, plan_csv(args));
  };
  const std::string a = shard("0/2", "3"), b = shard("1/2", "3"), c = shard("1/2", "2");
  const std::string unsharded = temp_file("whole", plan_csv(search));
  auto refused = [](const CliResult& r, const std::string& needle) {
    CAPTURE(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(needle) != std::string::npos);
  };
  refused(merge({a}), "shard 1/2 of the search is not among the files");
  refused(merge({a, c}), "is not a shard of the same search");
  refused(merge({a, a}), "holds shard 0/2");
  refused(merge({unsharded}), "has no shard line");
  CHECK(merge({a, b}).code == 0);
  for (const std::string& f : {a, b, c, unsharded}) std::filesystem::remove(f);
}
