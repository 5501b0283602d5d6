// Runs the trident binary from tests: stdout, stderr and exit code of one command line.
#ifndef TRIDENT_TESTS_CLI_RUNNER_H_
#define TRIDENT_TESTS_CLI_RUNNER_H_

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace trident::testing {

struct CliResult {
  int code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Returns the whole content of `path` ("" when unreadable).
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Returns `s` quoted for /bin/sh.
inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs `trident ARGS` from the source directory (stderr is a file, never a terminal).
inline CliResult run_trident(const std::vector<std::string>& args) {
  static int counter = 0;
  const std::string err_file =
      (std::filesystem::temp_directory_path() /
       ("trident_cli_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".err"))
          .string();
  std::string cmd = "cd " + shell_quote(TRIDENT_SOURCE_DIR) + " && " + shell_quote(TRIDENT_BINARY);
  for (const std::string& a : args) cmd += " " + shell_quote(a);
  cmd += " 2>" + shell_quote(err_file);
  CliResult r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  const int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_file(err_file);
  std::filesystem::remove(err_file);
  return r;
}

// REQUIRE inside: call from a test case.
// Starts `trident ARGS` from the source directory (stderr to /dev/null); returns its pid.
inline pid_t spawn_trident(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {TRIDENT_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  const std::string cwd = std::filesystem::current_path().string();
  std::filesystem::current_path(TRIDENT_SOURCE_DIR);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, cargv[0], &actions, nullptr, cargv.data(), environ);
  std::filesystem::current_path(cwd);
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE(spawned == 0);
  return pid;
}

}  // namespace trident::testing

#endif  // TRIDENT_TESTS_CLI_RUNNER_H_
