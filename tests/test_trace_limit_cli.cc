// The trace's size limit (issue 13 item 12: 100000 micro-batches wrote 1.25 GB with 2.6 GB
// RSS): estimated before simulating and refused with the limit named, and enforced while the
// trace streams to its file, which is then left as it was.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_runner.h"

namespace {

namespace fs = std::filesystem;
using trident::testing::CliResult;
using trident::testing::read_file;
using trident::testing::run_trident;

}  // namespace

TEST_CASE("a trace estimated past --trace-limit is refused before simulating",
          "[trace][cli][limits]") {
  const std::string dir =
      (fs::temp_directory_path() / ("trident_trace_limit_" + std::to_string(::getpid()))).string();
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string trace = dir + "/big.json";
  CliResult r = run_trident({"simulate", "scenarios/tiny.yaml", "--set",
                             "plan.num_microbatches=100000", "--trace", trace});
  CHECK(r.code == 2);
  CHECK(r.err.find("--trace-limit 512 MiB") != std::string::npos);
  CHECK(r.out.empty());  // before simulating
  CHECK(!fs::exists(trace));

  // Past a small limit while streaming (the estimate is a lower bound): exit 1, old file kept.
  std::ofstream(trace) << "old";
  r = run_trident({"simulate", "scenarios/tiny.yaml", "--set", "plan.num_microbatches=512",
                   "--trace", trace, "--trace-limit", "8"});
  CHECK(r.code == 1);
  CHECK(r.err.find("grew past --trace-limit 8 MiB") != std::string::npos);
  CHECK(read_file(trace) == "old");
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
  // Within the limit, or with none, the trace is written.
  r = run_trident({"simulate", "scenarios/tiny.yaml", "--set", "plan.num_microbatches=512",
                   "--trace", trace, "--trace-limit", "0"});
  CHECK(r.code == 0);
  CHECK(fs::file_size(trace) > (8u << 20));
  CHECK(run_trident({"simulate", "scenarios/tiny.yaml", "--trace-limit", "-1"}).code == 2);
  fs::remove_all(dir);
}
