// core/output_file: what a written output replaces. Issue 13 item 2 (a device node or a
// symlink's target was replaced by a regular file) and item 15 (a temporary name past
// NAME_MAX made a valid long name fail after the run). Issue 30: two names for one file
// through links, and temporaries left by SIGINT, SIGTERM or a file-size limit (SIGXFSZ).
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/output_file.h"

namespace {

namespace fs = std::filesystem;

std::string scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() /
                       ("trident_output_file_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

size_t entries(const std::string& dir) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

}  // namespace

TEST_CASE("a device is written in place, never replaced", "[output_file]") {
  REQUIRE(fs::is_character_file("/dev/null"));
  CHECK(trident::output_path_problem("/dev/null").empty());
  trident::write_file_atomically("/dev/null", "ignored\n");
  CHECK(fs::is_character_file("/dev/null"));
  // Writing to a full device fails and names it.
  if (fs::exists("/dev/full")) {
    CHECK_THROWS_WITH(trident::write_file_atomically("/dev/full", std::string(1 << 21, 'x')),
                      Catch::Contains("/dev/full"));
    CHECK(fs::is_character_file("/dev/full"));
  }
}

TEST_CASE("a symlink is followed to the file it names", "[output_file]") {
  const std::string dir = scratch("symlink");
  std::ofstream(dir + "/real.json") << "old";
  fs::create_symlink("real.json", dir + "/link.json");
  trident::write_file_atomically(dir + "/link.json", "new");
  CHECK(fs::is_symlink(dir + "/link.json"));
  CHECK(slurp(dir + "/real.json") == "new");
  // A dangling link creates the file it names.
  fs::create_symlink("made.json", dir + "/dangling.json");
  CHECK(trident::output_target(dir + "/dangling.json") == dir + "/made.json");
  trident::write_file_atomically(dir + "/dangling.json", "made");
  CHECK(fs::is_symlink(dir + "/dangling.json"));
  CHECK(slurp(dir + "/made.json") == "made");
  CHECK(entries(dir) == 4);  // no temporary left behind
  fs::remove_all(dir);
}

TEST_CASE("a regular file is replaced whole and keeps its mode", "[output_file]") {
  const std::string dir = scratch("regular");
  const std::string path = dir + "/out.json";
  std::ofstream(path) << "old";
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  {
    trident::AtomicOutputFile out(path);
    out.write("part one, ");
    CHECK(slurp(path) == "old");  // readers see the old file until commit
    out.write("part two");
    out.commit();
  }
  CHECK(slurp(path) == "part one, part two");
  CHECK((fs::status(path).permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
  {
    trident::AtomicOutputFile abandoned(path);
    abandoned.write("never committed");
  }
  CHECK(slurp(path) == "part one, part two");
  CHECK(entries(dir) == 1);
  fs::remove_all(dir);
}

TEST_CASE("names up to NAME_MAX are written, longer ones are refused before the run",
          "[output_file]") {
  const std::string dir = scratch("long");
  const std::string longest = dir + "/" + std::string(250, 'a') + ".json";  // 255 bytes
  CHECK(trident::output_path_problem(longest).empty());
  trident::write_file_atomically(longest, "ok");
  CHECK(slurp(longest) == "ok");
  const std::string too_long = dir + "/" + std::string(251, 'a') + ".json";
  CHECK_THAT(trident::output_path_problem(too_long), Catch::Contains("longer than"));
  CHECK_THAT(trident::output_path_problem(dir + "/no/such/dir/x.json"),
             Catch::Contains("does not exist"));
  CHECK_THAT(trident::output_path_problem(dir), Catch::Contains("is a directory"));
  fs::remove_all(dir);
}

TEST_CASE("two output names that reach one file, through links or not, are one output",
          "[output_file]") {
  const std::string dir = scratch("same");
  fs::create_directories(dir + "/real");
  fs::create_directory_symlink("real", dir + "/alias");
  fs::create_symlink("b.svg", dir + "/a.json");  // dangling: writing it creates b.svg
  using trident::same_output_file;
  CHECK(same_output_file(dir + "/a.json", dir + "/b.svg"));
  CHECK(same_output_file(dir + "/./b.svg", dir + "/b.svg"));
  CHECK(same_output_file(dir + "/real/x.svg", dir + "/alias/x.svg"));  // neither exists
  std::ofstream(dir + "/real/y.svg") << "y";
  fs::create_hard_link(dir + "/real/y.svg", dir + "/hard.svg");
  CHECK(same_output_file(dir + "/hard.svg", dir + "/alias/y.svg"));
  CHECK_FALSE(same_output_file(dir + "/a.json", dir + "/c.svg"));
  CHECK_FALSE(same_output_file(dir + "/real/y.svg", dir + "/real/z.svg"));
  CHECK_FALSE(same_output_file("/dev/null", "/dev/null"));  // a device takes both
  fs::remove_all(dir);
}

namespace {

// Forks a child that opens an AtomicOutputFile at `path`, writes 2 MiB (so a temporary
// exists on disk), tells the parent through a pipe, and waits; the parent sends `sig`.
// Returns the child's wait status.
int interrupted_writer(const std::string& path, int sig) {
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(ready[0]);
    // As in trident: the default actions (the test framework catches these signals).
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    trident::AtomicOutputFile out(path);
    out.write(std::string(2 << 20, 'x'));
    (void)!::write(ready[1], "r", 1);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  ::close(ready[0]);
  ::kill(pid, sig);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

}  // namespace

TEST_CASE("a writer ended by SIGINT or SIGTERM leaves no temporary, and dies of the signal",
          "[output_file][signals]") {
  for (int sig : {SIGINT, SIGTERM}) {
    const std::string dir = scratch("signal" + std::to_string(sig));
    std::ofstream(dir + "/trace.json") << "old";
    const int status = interrupted_writer(dir + "/trace.json", sig);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == sig);
    CHECK(entries(dir) == 1);  // trace.json only: no .trident-XXXXXX
    CHECK(slurp(dir + "/trace.json") == "old");
    fs::remove_all(dir);
  }
}

TEST_CASE("a file-size limit (SIGXFSZ) is a write error naming the file, with no temporary",
          "[output_file][signals]") {
  const std::string dir = scratch("fsize");
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    struct rlimit limit {};
    limit.rlim_cur = limit.rlim_max = 1 << 20;
    ::setrlimit(RLIMIT_FSIZE, &limit);
    int code = 10;
    try {
      trident::write_file_atomically(dir + "/big.json", std::string(4 << 20, 'x'));
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      code =
          what.find("big.json") != std::string::npos && what.find("too large") != std::string::npos
              ? 0
              : 11;
    }
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));  // not killed by SIGXFSZ
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(entries(dir) == 0);
  fs::remove_all(dir);
}
