// End-to-end tests of `trident simulate`: the shipped scenario, output formats, overrides,
// determinism, every bad input of the corpus (exit 2, one located message), the activity limit
// at each fidelity, and --trace and --timeline files (written after a successful run only,
// whole, byte-identical across runs; a bad output path fails before simulating).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace {

namespace fs = std::filesystem;
using Result = trident::testing::CliResult;
using Run = trident::testing::CliResult;
using trident::testing::read_file;
using trident::testing::run_trident;

std::string slurp(const fs::path& path) { return read_file(path.string()); }
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

TEST_CASE("the shipped GPT-3 175B scenario reports every key, plausibly", "[cli][e2e]") {
  const Result r = run_trident({"simulate", "scenarios/gpt3-175b-3d.yaml", "--format", "json"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key :
       {"step_time_s", "bubble_fraction", "compute_utilization", "mfu", "hfu",
        "model_tflops_per_gpu", "tokens_per_s", "tp_comm_exposed_s", "pp_comm_exposed_s",
        "dp_comm_exposed_s", "peak_memory_gib", "fits_in_memory", "gpus", "stages"}) {
    INFO(key);
    CHECK(j.contains(key));
  }
  CHECK(j["gpus"] == 1024);
  CHECK(j["num_microbatches"] == 96);
  CHECK(j["step_time_s"].get<double>() > 0);
  CHECK(j["bubble_fraction"].get<double>() > 0);
  CHECK(j["bubble_fraction"].get<double>() < 1);
  CHECK(j["mfu"].get<double>() > 0);
  CHECK(j["mfu"].get<double>() < 1);
  CHECK(j["hfu"].get<double>() >= j["mfu"].get<double>());
  CHECK(j["compute_utilization"].get<double>() < 1);
  CHECK(j["fits_in_memory"] == true);
  CHECK(j["tp_comm_exposed_s"].get<double>() > 0);
  CHECK(j["dp_comm_exposed_s"].get<double>() > 0);
  REQUIRE(j["stages"].size() == 8);
  for (const auto& s : j["stages"]) CHECK(s["num_layers"] == 12);
  // Throughput and model FLOP rate agree on the model FLOPs per token that Megatron-LM's
  // num_floating_point_operations gives (Korthikanti et al. 2022, eq. 7, causal scores halved):
  // 72 l h^2 (1 + s/(12h) + V/(12 l h)) for l = 96, h = 12288, s = 2048, V = 51200.
  const double l = 96, h = 12288, s = 2048, v = 51200;
  const double flops_per_token = 72 * l * h * h * (1 + s / (12 * h) + v / (12 * l * h));
  CHECK(j["model_tflops_per_gpu"].get<double>() * 1e12 * 1024 / j["tokens_per_s"].get<double>() ==
        Approx(flops_per_token).epsilon(1e-3));
}

TEST_CASE("same input gives byte-identical output", "[cli][determinism]") {
  for (const char* format : {"table", "json", "csv"}) {
    const Result a = run_trident({"simulate", "scenarios/tiny.yaml", "--format", format});
    const Result b = run_trident({"simulate", "scenarios/tiny.yaml", "--format", format});
    REQUIRE(a.code == 0);
    CHECK(a.out == b.out);
  }
}

TEST_CASE("csv prints a header and one row of scalar keys", "[cli]") {
  const Result r = run_trident({"simulate", "scenarios/tiny.yaml", "--format", "csv"});
  REQUIRE(r.code == 0);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 2);
  CHECK(r.out.rfind("step_time_s,bubble_fraction,", 0) == 0);
}

TEST_CASE("a --set option overrides a field after files are loaded", "[cli]") {
  const Result base = run_trident({"simulate", "scenarios/tiny.yaml", "--format", "json"});
  const Result more = run_trident(
      {"simulate", "scenarios/tiny.yaml", "--format", "json", "--set", "plan.num_microbatches=32"});
  REQUIRE(base.code == 0);
  REQUIRE(more.code == 0);
  const auto a = nlohmann::json::parse(base.out), b = nlohmann::json::parse(more.out);
  CHECK(b["num_microbatches"] == 32);
  CHECK(b["bubble_fraction"].get<double>() < a["bubble_fraction"].get<double>());
}

TEST_CASE("full fidelity runs from the command line", "[cli]") {
  const Result r =
      run_trident({"simulate", "scenarios/tiny.yaml", "--format", "json", "--fidelity", "full"});
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["fidelity"] == "full");
}

TEST_CASE("every corpus input fails `trident simulate` with exit 2 before simulating",
          "[cli][bad_inputs]") {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(TRIDENT_SOURCE_DIR) / "tests/bad_inputs")) {
    if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 25);
  for (const fs::path& file : files) {
    std::ifstream in(file);
    std::string line, expect;
    std::vector<std::string> args = {"simulate", fs::relative(file, TRIDENT_SOURCE_DIR).string()};
    std::getline(in, line);
    REQUIRE(line.rfind("# expect: ", 0) == 0);
    expect = line.substr(10);
    while (std::getline(in, line) && line.rfind("# ", 0) == 0) {
      if (line.rfind("# set: ", 0) == 0) {
        args.push_back("--set");
        args.push_back(line.substr(7));
      }
    }
    const Result r = run_trident(args);
    INFO(file.filename().string() << ": " << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(expect) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.out.empty());
  }
}

TEST_CASE("the activity limit counts what the fidelity simulates", "[cli][limits]") {
  // 100,000 micro-batches of GPT-3: fast fidelity simulates one replica per stage (accepted),
  // full fidelity all 1024 GPUs (refused before simulating, exit 2, file and plan key).
  const std::vector<std::string> many = {"scenarios/gpt3-175b-3d.yaml", "--set",
                                         "plan.num_microbatches=100000"};
  std::vector<std::string> args = {"validate"};
  args.insert(args.end(), many.begin(), many.end());
  const Result ok = run_trident(args);
  INFO(ok.err);
  CHECK(ok.code == 0);
  args = {"simulate"};
  args.insert(args.end(), many.begin(), many.end());
  args.insert(args.end(), {"--fidelity", "full"});
  const Result full = run_trident(args);
  CHECK(full.code == 2);
  CHECK(full.out.empty());
  CHECK(full.err.find("scenarios/gpt3-175b-3d.yaml: plan.num_microbatches: at --fidelity full, "
                      "one step would run about") != std::string::npos);
  CHECK(full.err.find("more than the simulation-activity limit of 100000000") != std::string::npos);
  // Expert groups spread over nodes with per-pair flows simulate every replica: refused in
  // fast fidelity too, by validate and simulate alike.
  for (const char* command : {"validate", "simulate"}) {
    const Result moe = run_trident({command, "scenarios/mixtral-8x7b-dgx-h100.yaml", "--set",
                                    "plan.global_batch_size=65536", "--set",
                                    "plan.placement=[tensor, pipeline, data]"});
    INFO(command << ": " << moe.err);
    CHECK(moe.code == 2);
    CHECK(moe.err.find("on each of pipeline_parallel × data_parallel actors") != std::string::npos);
  }
}

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

TEST_CASE("simulate: --trace and --timeline naming one file through a link are refused",
          "[cli][trace]") {
  TempDir dir("link");
  const fs::path trace = dir.path / "step.json", svg = dir.path / "step.svg";
  fs::create_symlink("step.svg", trace);  // dangling: both outputs would write step.svg
  const Run r = run_trident(
      {"simulate", "scenarios/tiny.yaml", "--trace", trace.string(), "--timeline", svg.string()},
      dir.path);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("name the same file") != std::string::npos);
  CHECK(dir.entries().size() == 1);  // the link only
  fs::create_directory(dir.path / "real");
  fs::create_directory_symlink("real", dir.path / "alias");
  const Run through_dir =
      run_trident({"simulate", "scenarios/tiny.yaml", "--trace", (dir.path / "real/x").string(),
                   "--timeline", (dir.path / "alias/x").string()},
                  dir.path);
  CHECK(through_dir.code == 2);
  CHECK(through_dir.err.find("name the same file") != std::string::npos);
}

TEST_CASE("a trace cut by a file-size limit (SIGXFSZ) fails with exit 1 and leaves no file",
          "[cli][trace][signals]") {
  TempDir dir("fsize");
  const fs::path trace = dir.path / "step.json";
  // ulimit -f counts 1024-byte blocks: 8 KiB, far below tiny's trace.
  const std::string cmd = "cd " + trident::testing::shell_quote(TRIDENT_SOURCE_DIR) +
                          " && ulimit -f 8 && " + trident::testing::shell_quote(TRIDENT_BINARY) +
                          " simulate scenarios/tiny.yaml --trace " +
                          trident::testing::shell_quote(trace.string()) + " >/dev/null 2>" +
                          trident::testing::shell_quote((dir.path / "err").string());
  const int status = std::system(cmd.c_str());
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(slurp(dir.path / "err").find("File too large") != std::string::npos);
  CHECK(dir.entries() == std::vector<std::string>{"err"});  // no step.json, no .trident-*
}

TEST_CASE("the report says how much of the cluster it used, and its memory margin",
          "[cli][report]") {
  // tiny: 8 GPUs on 2 nodes; p = 1 with t = 2, d = 2 uses 4 of them.
  const Result part = run_trident({"simulate", "scenarios/tiny.yaml", "--set",
                                   "plan.pipeline_parallel=1", "--set", "plan.data_parallel=2"});
  REQUIRE(part.code == 0);
  CHECK_THAT(part.out, Catch::Contains("(4 of 8 GPUs), seq "));
  const Result json =
      run_trident({"simulate", "scenarios/tiny.yaml", "--set", "plan.pipeline_parallel=1", "--set",
                   "plan.data_parallel=2", "--format", "json"});
  REQUIRE(json.code == 0);
  const nlohmann::json j = nlohmann::json::parse(json.out);
  CHECK(j["gpus"] == 4);
  CHECK(j["cluster_gpus"] == 8);
  CHECK(j["seq_length"] == 1024);

  // A footprint under the HBM size that does not leave room for the reserve does not fit.
  const auto memory = [](const std::string& hbm, const std::string& reserved) {
    const Result r = run_trident({"simulate", "scenarios/tiny.yaml", "--format", "json", "--set",
                                  "cluster.gpu.memory=" + hbm, "--set",
                                  "cluster.gpu.memory_reserved=" + reserved});
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
  };
  const nlohmann::json roomy = memory("80 GiB", "5 GiB");
  const double peak = roomy["peak_memory_gib"];
  REQUIRE(peak < 3);
  CHECK(roomy["memory_margin_gib"].get<double>() == Approx(80 - 5 - peak));
  const nlohmann::json tight = memory("4 GiB", "3.5 GiB");  // 0.5 GiB left, under the peak
  CHECK_FALSE(tight["fits_in_memory"].get<bool>());
  CHECK(tight["memory_margin_gib"].get<double>() < 0);
  CHECK(memory("4 GiB", "0 GiB")["fits_in_memory"].get<bool>());
  // A reserve of the whole GPU or more is bad input, not a plan that does not fit.
  const Result over =
      run_trident({"simulate", "scenarios/tiny.yaml", "--set", "cluster.gpu.memory=4 GiB", "--set",
                   "cluster.gpu.memory_reserved=5 GiB"});
  CHECK(over.code == 2);
  CHECK_THAT(over.err, Catch::Contains("cluster.gpu.memory_reserved: memory_reserved 5 GiB is not "
                                       "below the GPU's memory of 4 GiB"));
}

TEST_CASE("interleaved runs: the ideal-bubble formula has v, the timeline names every chunk",
          "[cli][report][timeline]") {
  const std::string svg =
      (fs::temp_directory_path() / ("trident_chunks_" + std::to_string(::getpid()) + ".svg"))
          .string();
  const Result r = run_trident({"simulate", "scenarios/tiny.yaml", "--set", "model.num_layers=10",
                                "--set", "plan.virtual_stages=5", "--set",
                                "plan.schedule=interleaved-1f1b", "--timeline", svg});
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("(ideal (p-1)/(v·m+p-1) = "));
  const std::string text = read_file(svg);
  fs::remove(svg);
  std::vector<std::string> fills;
  for (int c = 0; c < 5; ++c) {
    for (const char* pass : {"F", "B"}) {
      const std::string label = std::string(pass) + " chunk " + std::to_string(c) + "</text>";
      const size_t at = text.find(label);
      REQUIRE(at != std::string::npos);
      // The legend's swatch precedes its label: its fill is that chunk's colour.
      const size_t fill = text.rfind("fill=\"", at);
      fills.push_back(text.substr(fill + 6, text.find('"', fill + 6) - fill - 6));
    }
  }
  std::sort(fills.begin(), fills.end());
  CHECK(std::unique(fills.begin(), fills.end()) == fills.end());  // ten distinct colours
}
