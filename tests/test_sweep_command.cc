// End-to-end tests of `trident sweep`: rows in point order whatever --jobs, failing points as
// rows, SIGKILL + --resume giving the uninterrupted file byte for byte, bad command lines of
// sweep and merge, and scripts/slurm_sweep.sh running shards as an array job.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_output.h"
#include "cli_runner.h"
#include "file_watch.h"

extern char** environ;

using namespace trident::testing;

namespace {

namespace fs = std::filesystem;
using Result = CliResult;

std::string slurp(const std::string& path) { return read_file(path); }
std::string quote(const std::string& s) { return shell_quote(s); }

// A sweep of 14 tiny points: long enough to be killed part-way.
const std::vector<std::string> kLongSweep = {"sweep",  "scenarios/tiny.yaml",
                                             "--vary", "plan.num_microbatches=1,2,4,...,64",
                                             "--vary", "plan.micro_batch_size=1,2"};

}  // namespace

TEST_CASE("sweep writes one row per point in point order, whatever --jobs", "[sweep][cli]") {
  const Result one = run_trident({"sweep", "scenarios/tiny.yaml", "--jobs", "1"});
  const Result three = run_trident({"sweep", "scenarios/tiny.yaml", "--jobs", "3"});
  INFO(one.err);
  REQUIRE(one.code == 0);
  REQUIRE(three.code == 0);
  CHECK(one.out == three.out);
  CHECK(one.err.empty());  // no progress line when stderr is not a terminal
  CHECK(one.out.rfind("point,plan.num_microbatches,step_time_s,bubble_fraction,"
                      "ideal_bubble_fraction,",
                      0) == 0);
  const auto rows = rows_of(one.out);
  REQUIRE(rows.size() == 4);  // the scenario's sweep: [2, 4, 8, 16]
  double last_bubble = 1;
  for (size_t i = 0; i < rows.size(); ++i) {
    CHECK(get(rows[i], "point") == std::to_string(i));
    CHECK(get(rows[i], "status") == "ok");
    CHECK(get(rows[i], "num_microbatches") == get(rows[i], "plan.num_microbatches"));
    const double bubble = std::stod(get(rows[i], "bubble_fraction"));
    CHECK(bubble < last_bubble);
    last_bubble = bubble;
    // Beside the measured bubble, the closed form (p-1)/(m+p-1) with p = 2.
    const double m = std::stod(get(rows[i], "plan.num_microbatches"));
    CHECK(std::stod(get(rows[i], "ideal_bubble_fraction")) == Approx(1 / (m + 1)).epsilon(1e-8));
  }
}

TEST_CASE("failing and non-fitting points get their rows and the sweep goes on", "[sweep][cli]") {
  const Result r =
      run_trident({"sweep", "scenarios/tiny.yaml", "--vary", "plan.num_microbatches=4", "--vary",
                   "plan.tensor_parallel=3,2", "--vary", "cluster.gpu.memory=80 GiB,0.5 GiB"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto rows = rows_of(r.out);
  REQUIRE(rows.size() == 4);
  // No report, then the reason: "0,4,3,80 GiB,,,...,error: ..."
  const std::vector<std::string> lines = split(r.out, '\n');
  CHECK(lines[1].rfind("0,4,3,80 GiB,,,", 0) == 0);
  CHECK(lines[1].find(",error: ") != std::string::npos);
  CHECK(lines[1].find("plan uses 12 GPUs") != std::string::npos);
  CHECK(get(rows[2], "status") == "ok");
  CHECK(get(rows[3], "status") == "does not fit");
  CHECK(get(rows[3], "fits_in_memory") == "false");
  CHECK(!get(rows[3], "step_time_s").empty());
  CHECK(r.err.find("2 of 4 points failed") != std::string::npos);
}

TEST_CASE("a sweep killed with SIGKILL and resumed equals an uninterrupted one",
          "[sweep][cli][resume]") {
  const std::string dir = scratch("resume");
  const std::string full = dir + "/full.csv", killed = dir + "/killed.csv";
  std::vector<std::string> args = kLongSweep;
  args.insert(args.end(), {"--jobs", "2", "--out", full});
  REQUIRE(run_trident(args).code == 0);
  const std::string expected = slurp(full);
  REQUIRE(count_lines(expected) == 15);

  // Start the same sweep, one point at a time, and kill it once a few rows are in.
  std::vector<std::string> killed_args(kLongSweep.begin(), kLongSweep.end());
  killed_args.insert(killed_args.end(), {"--jobs", "1", "--out", killed});
  const pid_t pid = trident::testing::spawn_trident(killed_args);
  wait_for_file(killed, [](const std::string& csv) { return count_lines(csv) >= 4; });
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK(WIFSIGNALED(status));
  const std::string partial = slurp(killed);
  INFO("rows when killed: " << count_lines(partial) - 1);
  REQUIRE(count_lines(partial) >= 4);
  REQUIRE(count_lines(partial) < 15);      // killed part-way
  CHECK(expected.rfind(partial, 0) == 0);  // always a prefix of the final file

  std::vector<std::string> resume = kLongSweep;
  resume.insert(resume.end(), {"--jobs", "2", "--out", killed, "--resume"});
  const Result r = run_trident(resume);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(slurp(killed) == expected);

  // A torn last row (a crash mid-write) is dropped and its point run again.
  std::ofstream(killed, std::ios::binary) << expected.substr(0, expected.size() - 10);
  REQUIRE(run_trident(resume).code == 0);
  CHECK(slurp(killed) == expected);

  // Resuming a complete file changes nothing; resuming with another sweep is refused.
  REQUIRE(run_trident(resume).code == 0);
  CHECK(slurp(killed) == expected);
  const Result other = run_trident({"sweep", "scenarios/tiny.yaml", "--vary",
                                    "plan.tensor_parallel=1,2", "--out", killed, "--resume"});
  CHECK(other.code == 2);
  CHECK(other.err.find("header differs") != std::string::npos);
  CHECK(slurp(killed) == expected);
  fs::remove_all(dir);
}

TEST_CASE("sweep and merge reject bad command lines with exit 2", "[sweep][cli][bad_inputs]") {
  struct Case {
    std::vector<std::string> args;
    const char* fragment;
  };
  const Case cases[] = {
      {{"sweep", "scenarios/gpt3-175b-3d.yaml"}, "nothing to sweep"},
      {{"sweep", "scenarios/tiny.yaml", "--vary", "plan.tensor_paralel=1,2"}, "did you mean"},
      {{"sweep", "scenarios/tiny.yaml", "--vary", "plan.num_microbatches=1,...,12"},
       "power of two"},
      {{"sweep", "scenarios/tiny.yaml", "--shard", "3/3"}, "--shard"},
      {{"sweep", "scenarios/tiny.yaml", "--jobs", "0"}, "--jobs"},
      {{"sweep", "scenarios/tiny.yaml", "--resume"}, "--resume needs --out"},
      {{"sweep", "no/such.yaml", "--vary", "plan.num_microbatches=1"}, "no/such.yaml"},
      {{"merge"}, "missing FILE"},
      {{"merge", "no/such.csv"}, "no such file"},
      {{"compare", "scenarios/tiny.yaml"}, "--variant"},
      {{"compare", "scenarios/tiny.yaml", "--tp-placement", "intra,across"}, "across"},
      {{"compare", "scenarios/tiny.yaml", "--variant", "a:plan.tensor_parallel=3"}, "variant a"},
  };
  for (const Case& c : cases) {
    const Result r = run_trident(c.args);
    INFO(c.args.back() << " -> " << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(c.fragment) != std::string::npos);
    CHECK(count_lines(r.err) == 1);
    CHECK(r.out.empty());
  }
  for (const char* command : {"sweep", "compare", "merge"}) {
    CHECK(run_trident({command, "--help"}).code == 0);
  }
}

TEST_CASE("scripts/slurm_sweep.sh runs shards as an array job and merges them",
          "[sweep][cli][slurm]") {
  // A stand-in sbatch that runs each job at once: array tasks one after another.
  const std::string dir = scratch("slurm");
  const std::string sbatch = dir + "/sbatch";
  std::ofstream(sbatch) << R"(#!/usr/bin/env bash
array=""; wrap=""
while [ $# -gt 0 ]; do
  case "$1" in
    --array=*) array=${1#--array=} ;;
    --wrap) wrap=$2; shift ;;
  esac
  shift
done
if [ -n "$array" ]; then
  for i in $(seq "${array%-*}" "${array#*-}"); do
    SLURM_ARRAY_TASK_ID=$i SLURM_CPUS_PER_TASK=2 bash -c "$wrap" >/dev/null 2>&1 || exit 1
  done
else
  bash -c "$wrap" || exit 1
fi
echo $RANDOM
)";
  fs::permissions(sbatch, fs::perms::owner_all);
  const std::string cmd = "cd " + quote(TRIDENT_SOURCE_DIR) + " && PATH=" + quote(dir) +
                          ":$PATH TRIDENT=" + quote(TRIDENT_BINARY) +
                          " scripts/slurm_sweep.sh -n 3 -o " + quote(dir + "/out") +
                          " scenarios/tiny.yaml >/dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const Result whole = run_trident({"sweep", "scenarios/tiny.yaml"});
  REQUIRE(whole.code == 0);
  CHECK(slurp(dir + "/out/sweep.csv") == whole.out);
  CHECK(fs::exists(dir + "/out/shard-2.csv"));
  fs::remove_all(dir);
}
