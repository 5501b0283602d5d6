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
#include "file_watch.h"

using trident::testing::spawn_trident;

extern char** environ;

namespace {

namespace fs = std::filesystem;
using trident::testing::CliResult;
using trident::testing::read_file;
using trident::testing::run_trident;
using trident::testing::wait_for_file;

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
  const std::string scenario = dir + "/s.yaml";
  std::string text = read_file(std::string(TRIDENT_SOURCE_DIR) + "/scenarios/tiny.yaml");
  const std::string rel = "../configs/";
  // Library names need no rewriting; relative paths are made absolute for the copy.
  if (text.find(rel) != std::string::npos) {
    text.replace(text.find(rel), rel.size(), std::string(TRIDENT_SOURCE_DIR) + "/configs/");
  }
  std::ofstream(scenario, std::ios::binary) << text;
  const std::vector<std::string> sweep = {"sweep", scenario, "--vary", "plan.num_microbatches=2,4",
                                          "--out", out};
  REQUIRE(run_trident(sweep).code == 0);
  const std::string written = read_file(out);
  CHECK(fs::exists(out + ".manifest"));
  // Drop the last row, as a killed sweep would leave it.
  std::ofstream(out, std::ios::binary)
      << written.substr(0, written.rfind('\n', written.size() - 2) + 1);
  const std::string partial = read_file(out);

  CliResult r = run_trident(with(sweep, {"--resume", "--set", "plan.micro_batch_size=2"}));
  CHECK(r.code == 2);
  CHECK(r.err.find("--set was (none), now plan.micro_batch_size=2") != std::string::npos);
  std::ofstream(scenario, std::ios::app) << "# edited\n";
  r = run_trident(with(sweep, {"--resume"}));
  CHECK(r.code == 2);
  CHECK(r.err.find(fs::path(scenario).lexically_normal().string() + " changed") !=
        std::string::npos);
  CHECK(count_lines(r.err) == 1);
  CHECK(read_file(out) == partial);  // refused before anything was written
  fs::remove_all(dir);
}

TEST_CASE("a second sweep on a locked --out refuses", "[sweep][cli][lock]") {
  const std::string dir = scratch("lock");
  const std::string out = dir + "/l.csv";
  std::ofstream(out) << "";
  const int fd = ::open(out.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);  // as a running sweep holds it
  const CliResult r = run_trident(with(kSweep, {"--out", out}));
  CHECK(r.code == 2);
  CHECK(r.err.find("another trident sweep is writing this file") != std::string::npos);
  CHECK(read_file(out).empty());
  ::close(fd);
  CHECK(run_trident({"sweep", "scenarios/tiny.yaml", "--out", out}).code == 0);
  // Two real sweeps at once: exactly one writes, the other refuses.
  const pid_t a = spawn_trident(with(kSweep, {"--jobs", "1", "--out", out}));
  // Once its header is in, the first holds the lock (it locks before it writes).
  wait_for_file(out, [](const std::string& csv) {
    return csv.find("plan.micro_batch_size") != std::string::npos;
  });
  const CliResult b = run_trident(with(kSweep, {"--jobs", "1", "--out", out}));
  int status = 0;
  REQUIRE(::waitpid(a, &status, 0) == a);
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(b.code == 2);
  CHECK(read_file(out) == run_trident(kSweep).out);
  fs::remove_all(dir);
}

TEST_CASE("merge tells a complete shard from one that stopped between rows",
          "[sweep][cli][shard][merge]") {
  const std::string dir = scratch("merge");
  std::vector<std::string> merge = {"merge"};
  const std::vector<std::string> sweep = {"sweep", "scenarios/tiny.yaml", "--vary",
                                          "plan.num_microbatches=1,2,4,...,64"};  // 7 points
  for (int i = 0; i < 3; ++i) {
    const std::string file = dir + "/shard" + std::to_string(i) + ".csv";
    REQUIRE(run_trident(with(sweep, {"--shard", std::to_string(i) + "/3", "--out", file})).code ==
            0);
    merge.push_back(file);
  }
  REQUIRE(run_trident(merge).code == 0);
  // Point 6, the last, is in shard 0: drop it, as a shard stopped between rows leaves it.
  const std::string s0 = read_file(dir + "/shard0.csv");
  std::ofstream(dir + "/shard0.csv", std::ios::binary)
      << s0.substr(0, s0.rfind('\n', s0.size() - 2) + 1);
  CliResult r = run_trident(merge);
  CHECK(r.code == 2);
  CHECK(r.err.find("1 of the sweep's 7 points missing") != std::string::npos);
  CHECK(r.out.empty());
  r = run_trident({"merge", dir + "/shard1.csv", dir + "/shard2.csv"});
  CHECK(r.code == 2);
  CHECK(r.err.find("shard 0/3 of the sweep is not among the files") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("merge names directories, devices and a point twice in one file",
          "[sweep][cli][merge][bad_inputs]") {
  const std::string dir = scratch("merge_messages");
  const std::string one = dir + "/one.csv";
  REQUIRE(run_trident({"sweep", "scenarios/tiny.yaml", "--out", one}).code == 0);
  const std::string text = read_file(one);
  const std::string first_row =
      text.substr(text.find('\n') + 1, text.find('\n', text.find('\n') + 1) - text.find('\n'));
  std::ofstream(dir + "/twice.csv", std::ios::binary) << text << first_row;
  struct Case {
    std::vector<std::string> args;
    const char* fragment;
  };
  const Case cases[] = {
      {{"merge", "/dev/zero"}, "not a regular file"},
      {{"merge", dir}, "is a directory"},
      {{"merge", dir + "/none.csv"}, "no such file"},
      {{"merge", dir + "/twice.csv"}, "appears twice in this file"},
  };
  for (const Case& c : cases) {
    const CliResult r = run_trident(c.args);
    INFO(c.args.back() << " -> " << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find(c.fragment) != std::string::npos);
    CHECK(count_lines(r.err) == 1);
  }
  fs::remove_all(dir);
}

TEST_CASE("point counts and --jobs are bounded before anything runs", "[sweep][cli][limits]") {
  const std::string huge = "=1,2,4,...,1073741824";  // 31 values
  CliResult r = run_trident(
      {"sweep", "scenarios/tiny.yaml", "--vary", "plan.tensor_parallel" + huge, "--vary",
       "plan.pipeline_parallel" + huge, "--vary", "plan.data_parallel" + huge, "--vary",
       "plan.micro_batch_size" + huge, "--vary", "plan.num_microbatches" + huge});
  CHECK(r.code == 2);
  CHECK(r.err.find("limit of 100000 points") != std::string::npos);
  CHECK(r.out.empty());
  // Far more jobs than the open-file limit allows: capped, with a note, and every row comes.
  const std::string cmd = "cd '" + std::string(TRIDENT_SOURCE_DIR) + "' && ulimit -n 64 && '" +
                          TRIDENT_BINARY +
                          "' sweep scenarios/tiny.yaml --jobs 600 2>&1 >/dev/null | grep -q "
                          "'capped at'";
  CHECK(std::system(cmd.c_str()) == 0);
  r = run_trident({"sweep", "scenarios/tiny.yaml", "--jobs", "600"});
  CHECK(r.code == 0);
  CHECK(count_lines(r.out) == 5);
}

TEST_CASE("NVLink islands smaller than a node simulate in a sweep, never abort",
          "[sweep][cli][islands]") {
  // Issue 13 item 1: island_size=4 on 8-GPU nodes aborted inside SimGrid ("Link 'nic0_0_up'
  // declared several times"); tiny-2node has 4 GPUs per node.
  const CliResult r =
      run_trident({"sweep", "scenarios/tiny.yaml", "--vary", "cluster.nvlink.island_size=4,2,1",
                   "--vary", "plan.num_microbatches=4"});
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(count_lines(r.out) == 4);
  CHECK(r.out.find("error") == std::string::npos);
  CHECK(r.err.empty());
  const CliResult one =
      run_trident({"simulate", "scenarios/tiny.yaml", "--set", "cluster.nvlink.island_size=2",
                   "--fidelity", "full", "--format", "json"});
  CHECK(one.code == 0);
}

TEST_CASE("FILE.manifest is checked as --out is, never over an input, an unrelated file or a link",
          "[sweep][cli][manifest]") {
  // Issue 30: the manifest beside --out overwrote the scenario, an unrelated file, or the file
  // a symlink there named.
  const std::string dir = scratch("manifest");
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

TEST_CASE("a sweep whose every point failed exits 1, one with a report exits 0", "[sweep][cli]") {
  CliResult r = run_trident(
      {"sweep", "scenarios/tiny.yaml", "--vary", "plan.tensor_parallel=3,5", "--jobs", "2"});
  CHECK(r.code == 1);
  CHECK(count_lines(r.out) == 9);  // the header and 4 x 2 rows (tiny sweeps 4 micro-batch counts)
  CHECK(r.err.find("every point failed") != std::string::npos);
  r = run_trident(
      {"sweep", "scenarios/tiny.yaml", "--vary", "plan.tensor_parallel=3,2", "--jobs", "2"});
  CHECK(r.code == 0);
  CHECK(
      run_trident({"sweep", "--help"}).out.find("1 when every point this run simulated\nfailed") !=
      std::string::npos);
}
