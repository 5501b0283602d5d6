// `trident plan --shard I/N --format csv|json` + `trident merge`: the merged shards are the
// unsharded search's CSV or JSON, byte for byte, and shards of different searches or of
// different formats do not merge.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.h"

using namespace trident::testing;

namespace {

std::string plan_output(std::vector<std::string> args, const std::string& format) {
  args.insert(args.begin(), "plan");
  args.insert(args.end(), {"--format", format, "--jobs", "2"});
  const CliResult r = run_trident(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return r.out;
}

std::string plan_csv(const std::vector<std::string>& args) { return plan_output(args, "csv"); }
std::string plan_json(const std::vector<std::string>& args) { return plan_output(args, "json"); }

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

TEST_CASE("trident merge of JSON plan shards 0/3 1/3 2/3 is the unsharded plan JSON") {
  // The counts of the merged JSON are the unsharded search's: its proving prefix is found
  // again from the shards' prefixes, which together simulate more than it needs.
  const std::vector<std::vector<std::string>> searches = {
      {"scenarios/tiny.yaml", "--top", "7"},
      {"--cluster", "tiny-2node", "--model", "gpt-1.7b", "--global-batch", "32", "--top", "4"},
      {"--cluster", "tiny-2node", "--model", "gpt-1.7b", "--global-batch", "32", "--top", "1"}};
  bool merged_count_differs = false;
  for (const std::vector<std::string>& search : searches) {
    const std::string whole = plan_json(search);
    std::vector<std::string> files;
    long long shard_simulated = 0;
    for (int i = 0; i < 3; ++i) {
      std::vector<std::string> args = search;
      args.insert(args.end(), {"--shard", std::to_string(i) + "/3"});
      const std::string shard = plan_json(args);
      const nlohmann::json j = nlohmann::json::parse(shard);
      CHECK(j.at("shard").at("index") == i);
      shard_simulated += j.at("candidates").at("simulated").get<long long>();
      files.push_back(temp_file("json" + std::to_string(i), shard));
    }
    const CliResult r = merge({files[1], files[2], files[0]});
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(r.out == whole);
    const long long simulated =
        nlohmann::json::parse(whole).at("candidates").at("simulated").get<long long>();
    CHECK(simulated <= shard_simulated);
    if (simulated < shard_simulated) merged_count_differs = true;
    for (const std::string& f : files) std::filesystem::remove(f);
  }
  // Not the shards' sum: the merge walked the prefixes by the unsharded stopping rule.
  CHECK(merged_count_differs);
}

TEST_CASE("trident merge refuses JSON plan shards that are missing mixed or from another search") {
  const std::vector<std::string> search = {"--cluster", "tiny-2node",     "--model",
                                           "gpt-1.7b",  "--global-batch", "32"};
  auto shard = [&](const std::string& which, const std::string& top, const std::string& format,
                   std::vector<std::string> extra = {}) {
    std::vector<std::string> args = search;
    args.insert(args.end(), {"--top", top, "--shard", which});
    args.insert(args.end(), extra.begin(), extra.end());
    return temp_file(format + which.substr(0, 1) + "_" + top + std::to_string(extra.size()),
                     plan_output(args, format));
  };
  const std::string a = shard("0/2", "3", "json"), b = shard("1/2", "3", "json");
  const std::string c = shard("1/2", "2", "json"), csv_b = shard("1/2", "3", "csv");
  const std::string other = shard("1/2", "3", "json", {"--fix", "plan.recompute=full"});
  const std::string unsharded = temp_file("whole_json", plan_json(search));
  auto refused = [](const CliResult& r, const std::string& needle) {
    CAPTURE(r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(needle) != std::string::npos);
  };
  refused(merge({a}), "shard 1/2 of the search is not among the files");
  refused(merge({a, c}), "is not a shard of the same search");
  refused(merge({a, other}), "is not a shard of the same search");
  refused(merge({a, a}), "holds shard 0/2");
  refused(merge({unsharded}), "has no \"shard\" object");
  refused(merge({a, csv_b}), "is not the JSON of trident plan");
  refused(merge({csv_b, a}), "is not the CSV of trident plan");
  CHECK(merge({a, b}).code == 0);
  for (const std::string& f : {a, b, c, csv_b, other, unsharded}) std::filesystem::remove(f);
}
