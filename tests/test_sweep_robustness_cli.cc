// Sweeps under hostile conditions (issue 13): children killed from outside and resumed (items
// 8 and the fault-injection test), a resume with other inputs (7), two sweeps on one --out
// (6), a shard that stopped between rows (5), point-count and --jobs limits (10, 11), a stuck
// point (9: --point-timeout), and merge's messages (17).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cli_runner.h"

using trident::testing::spawn_trident;

extern char** environ;

namespace {

namespace fs = std::filesystem;
using trident::testing::CliResult;
using trident::testing::read_file;
using trident::testing::run_trident;

std::string scratch(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("trident_sweep_rob_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

size_t count_lines(const std::string& s) { return std::count(s.begin(), s.end(), '\n'); }

// 14 tiny points.
const std::vector<std::string> kSweep = {"sweep",  "scenarios/tiny.yaml",
                                         "--vary", "plan.num_microbatches=1,2,4,...,64",
                                         "--vary", "plan.micro_batch_size=1,2"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// The pids of the processes whose parent is `parent` (scanning /proc).
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = read_file(e.path().string() + "/stat");
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == parent) {
      out.push_back(std::stoi(name));
    }
  }
  return out;
}

// Whether process `pid` has exited; reaps it and stores its status.
bool exited(pid_t pid, int* status) { return ::waitpid(pid, status, WNOHANG) == pid; }

}  // namespace

TEST_CASE(
    "fault injection: children killed at random, resumed until complete, equal the "
    "uninterrupted sweep byte for byte",
    "[sweep][cli][resume][fault]") {
  const std::string dir = scratch("fault");
  const std::string full = dir + "/full.csv", run = dir + "/run.csv";
  REQUIRE(run_trident(with(kSweep, {"--jobs", "2", "--out", full})).code == 0);
  const std::string expected = read_file(full);
  REQUIRE(count_lines(expected) == 15);

  std::mt19937 rng(20261201);  // fixed seed: the same kill moments' schedule every run
  std::uniform_int_distribution<int> delay_ms(5, 120);
  int kills = 0, rounds = 0;
  bool saw_interrupted_row = false;
  // A kill can land on a child that has just finished (its row is then whole): on a fast
  // machine a whole attempt may interrupt nothing, so start again until one did.
  for (int attempt = 0; attempt < 6 && !saw_interrupted_row; ++attempt) {
    fs::remove(run);
    fs::remove(run + ".manifest");
    for (rounds = 0; rounds < 12; ++rounds) {
      std::vector<std::string> args = with(kSweep, {"--jobs", "2", "--out", run});
      if (rounds > 0) args.push_back("--resume");
      const pid_t pid = spawn_trident(args);
      int status = 0;
      bool done = false;
      // Kill up to two children of this round at random moments; the last rounds run clean.
      for (int k = 0; k < (rounds < 8 ? 2 : 0) && !done; ++k) {
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
        done = exited(pid, &status);
        if (done) break;
        const std::vector<pid_t> kids = children_of(pid);
        if (kids.empty()) continue;
        ::kill(kids[std::uniform_int_distribution<size_t>(0, kids.size() - 1)(rng)], SIGKILL);
        ++kills;
      }
      if (!done) REQUIRE(::waitpid(pid, &status, 0) == pid);
      REQUIRE(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == 0);  // a killed child is a row, not a failed sweep
      const std::string now = read_file(run);
      if (now.find("error: interrupted: killed by signal 9") != std::string::npos) {
        saw_interrupted_row = true;
      }
      if (now == expected) break;
    }
  }
  INFO("rounds " << rounds << ", children killed " << kills);
  CHECK(kills > 0);
  CHECK(saw_interrupted_row);
  CHECK(read_file(run) == expected);
  // A complete file resumed changes nothing.
  REQUIRE(run_trident(with(kSweep, {"--jobs", "2", "--out", run, "--resume"})).code == 0);
  CHECK(read_file(run) == expected);
  fs::remove_all(dir);
}

TEST_CASE("a point past --point-timeout is killed, marked interrupted and rerun by --resume",
          "[sweep][cli][timeout]") {
  const std::string dir = scratch("timeout");
  const std::string out = dir + "/t.csv";
  const std::vector<std::string> sweep = {"sweep", "scenarios/tiny.yaml", "--vary",
                                          "plan.num_microbatches=2,4"};
  CliResult r = run_trident(with(sweep, {"--out", out, "--point-timeout", "0.001"}));
  INFO(r.err);
  CHECK(r.code == 0);
  const std::string timed_out = read_file(out);
  CHECK(timed_out.find("error: interrupted: timed out after 0.001 s") != std::string::npos);
  r = run_trident(with(sweep, {"--out", out, "--resume"}));
  CHECK(r.code == 0);
  CHECK(read_file(out) == run_trident(sweep).out);
  // compare: a variant past the limit fails (exit 1), the others are shown.
  r = run_trident({"compare", "scenarios/tiny.yaml", "--variant", "a:", "--point-timeout", "0.001",
                   "--format", "csv"});
  CHECK(r.code == 1);
  CHECK(r.out.find("timed out") != std::string::npos);
  CHECK(run_trident({"sweep", "scenarios/tiny.yaml", "--point-timeout", "-1"}).code == 2);
  fs::remove_all(dir);
}

TEST_CASE("sweep: --resume with other inputs is refused, naming what changed",
          "[sweep][cli][resume]") {
  const std::string dir = scratch("fingerprint");
  const std::string out = dir + "/f.csv";
  // The scenario is named like a manifest: --out s is not the scenario, but s.manifest is.
  const std::string scenario = dir + "/s.manifest";
  fs::copy_file(std::string(TRIDENT_SOURCE_DIR) + "/scenarios/tiny.yaml", scenario);
  const std::string scenario_text = read_file(scenario);
  const std::vector<std::string> sweep = {"sweep", scenario, "--vary", "plan.num_microbatches=4,8"};
  CliResult r = run_trident(with(sweep, {"--out", dir + "/s"}));
  CHECK(r.code == 2);
  CHECK(r.err.find("names an input") != std::string::npos);
  CHECK(read_file(scenario) == scenario_text);
  CHECK(!fs::exists(dir + "/s"));

  // An unrelated file where the manifest goes is not overwritten.
  std::ofstream(dir + "/notes.csv.manifest") << "my notes\n";
  r = run_trident(with(sweep, {"--out", dir + "/notes.csv"}));
  CHECK(r.code == 2);
  CHECK(r.err.find("not a trident sweep manifest") != std::string::npos);
  CHECK(read_file(dir + "/notes.csv.manifest") == "my notes\n");
  CHECK(!fs::exists(dir + "/notes.csv"));

  // Nor a file a symlink there points to.
  std::ofstream(dir + "/victim.txt") << "keep\n";
  fs::create_symlink("victim.txt", dir + "/run.csv.manifest");
  r = run_trident(with(sweep, {"--out", dir + "/run.csv"}));
  CHECK(r.code == 2);
  CHECK(r.err.find("symbolic link") != std::string::npos);
  CHECK(read_file(dir + "/victim.txt") == "keep\n");

  // A manifest written by a sweep is replaced by the next sweep, and --resume reads it.
  fs::remove(dir + "/run.csv.manifest");
  REQUIRE(run_trident(with(sweep, {"--out", dir + "/run.csv"})).code == 0);
  REQUIRE(run_trident(with(sweep, {"--out", dir + "/run.csv"})).code == 0);
  CHECK(run_trident(with(sweep, {"--out", dir + "/run.csv", "--resume"})).code == 0);
  CHECK(read_file(dir + "/run.csv.manifest").find("trident_sweep_manifest") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("a sweep whose every point failed exits 1; one with a report exits 0", "[sweep][cli]") {
  CliResult r = run_trident(
      {"sweep", "scenarios/tiny.yaml", "--vary", "plan.tensor_parallel=3,5", "--jobs", "2"});
  CHECK(r.code == 1);
  CHECK(count_lines(r.out) == 3);  // the header and both rows, saying why
  CHECK(r.err.find("every point failed") != std::string::npos);
  r = run_trident(
      {"sweep", "scenarios/tiny.yaml", "--vary", "plan.tensor_parallel=3,2", "--jobs", "2"});
  CHECK(r.code == 0);
  CHECK(run_trident({"sweep", "--help"}).out.find("1 when every point") != std::string::npos);
}
