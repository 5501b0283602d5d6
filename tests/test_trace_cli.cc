// End-to-end tests of `trident simulate --trace FILE --timeline FILE`: the files are written
// after a successful run only, whole, byte-identical across runs; a bad output path fails
// before simulating.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace {

namespace fs = std::filesystem;
using Run = trident::testing::CliResult;

std::string slurp(const fs::path& path) { return trident::testing::read_file(path.string()); }
Run run_trident(const std::vector<std::string>& args, const fs::path&) {
  return trident::testing::run_trident(args);
}

// A fresh, empty directory for one test's files, removed afterwards.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() /
             ("trident_trace_cli_" + std::to_string(::getpid()) + "_" + name)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path)) names.push_back(e.path().filename());
    return names;
  }
};

}  // namespace

TEST_CASE("simulate --trace --timeline writes both files, identical across runs", "[cli][trace]") {
  TempDir dir("both");
  const std::string trace = (dir.path / "step.json").string();
  const std::string svg = (dir.path / "step.svg").string();
  const Run r = run_trident(
      {"simulate", "scenarios/tiny.yaml", "--trace", trace, "--timeline", svg}, dir.path);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("step time") != std::string::npos);  // the report still goes to stdout
  const std::string first_trace = slurp(trace), first_svg = slurp(svg);
  const auto j = nlohmann::json::parse(first_trace);
  CHECK(j.at("traceEvents").size() > 100);
  CHECK(first_svg.rfind("<svg", 0) == 0);
  CHECK(first_svg.find("stage 1</text>") != std::string::npos);

  const Run again = run_trident(
      {"simulate", "scenarios/tiny.yaml", "--trace", trace, "--timeline", svg}, dir.path);
  REQUIRE(again.code == 0);
  CHECK(slurp(trace) == first_trace);  // replaced whole, byte for byte the same
  CHECK(slurp(svg) == first_svg);
  CHECK(dir.entries().size() == 2);  // no temporary left behind
}

TEST_CASE("simulate --timeline alone writes the SVG only", "[cli][trace]") {
  TempDir dir("svg_only");
  const std::string svg = (dir.path / "t.svg").string();
  const Run r = run_trident({"simulate", "scenarios/tiny.yaml", "--timeline", svg, "--set",
                             "plan.schedule=gpipe", "--format", "json"},
                            dir.path);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out).at("schedule") == "gpipe");
  CHECK(dir.entries() == std::vector<std::string>{"t.svg"});
}

TEST_CASE("a bad output path fails before simulating, and bad input writes nothing",
          "[cli][trace]") {
  TempDir dir("bad");
  const Run missing_dir = run_trident(
      {"simulate", "scenarios/tiny.yaml", "--trace", (dir.path / "no/such/dir/x.json").string()},
      dir.path);
  CHECK(missing_dir.code == 2);
  CHECK(missing_dir.out.empty());
  CHECK(missing_dir.err.find("--trace") != std::string::npos);
  CHECK(missing_dir.err.find("does not exist") != std::string::npos);

  const Run is_dir =
      run_trident({"simulate", "scenarios/tiny.yaml", "--timeline", dir.path.string()}, dir.path);
  CHECK(is_dir.code == 2);
  CHECK(is_dir.err.find("--timeline") != std::string::npos);

  // The scenario is refused (exit 2) after the paths were checked: no file appears.
  const std::string trace = (dir.path / "step.json").string();
  const Run bad = run_trident(
      {"simulate", "scenarios/tiny.yaml", "--set", "plan.tensor_parallel=3", "--trace", trace},
      dir.path);
  CHECK(bad.code == 2);
  CHECK(dir.entries().empty());
}
