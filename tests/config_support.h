// Helpers for tests of input files (src/config): temporary files, and what loading or
// checking a file reports.
#ifndef TRIDENT_TESTS_CONFIG_SUPPORT_H_
#define TRIDENT_TESTS_CONFIG_SUPPORT_H_

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/diagnostics.h"
#include "config/scenario.h"
#include "core/errors.h"

namespace trident::testing {

// Returns the path of a file in the source tree.
inline std::string repo(const std::string& rel) {
  return std::string(TRIDENT_SOURCE_DIR) + "/" + rel;
}

// Writes `text` to `name` (which may name subfolders) in a fresh temporary directory of this
// process; returns the file's path.
inline std::string write_temp(const std::string& name, const std::string& text) {
  namespace fs = std::filesystem;
  static int counter = 0;
  const fs::path dir =
      fs::temp_directory_path() /
      ("trident_test_config_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  fs::create_directories(dir / fs::path(name).parent_path());
  std::ofstream(dir / name, std::ios::binary) << text;
  return (dir / name).string();
}

// The message of the ConfigError that loading `path` with `overrides` throws; fails the test
// case when loading succeeds.
inline std::string load_error(const std::string& path,
                              const std::vector<std::string>& overrides = {}) {
  try {
    load_scenario(path, overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  FAIL("no ConfigError for " << path);
  return "";
}

// Every problem that checking `path` with `overrides` lists, as text.
inline std::vector<std::string> problems(const std::string& path,
                                         const std::vector<std::string>& overrides = {}) {
  Diagnostics diag;
  check_config_file(path, overrides, &diag);
  std::vector<std::string> out;
  for (const Problem& p : diag.problems()) out.push_back(p.text());
  return out;
}

// The shipped GPT-3 scenario, and one with an A100 cluster and the GPT-3 model by reference.
inline const std::string kGpt3 = repo("scenarios/gpt3-175b-3d.yaml");
inline const std::string kTiny = repo("scenarios/tiny.yaml");
inline const std::string kScenarioHead =
    "cluster: " + repo("configs/clusters/dgx-a100-superpod.yaml") +
    "\nmodel: " + repo("configs/models/gpt3-175b.yaml") + "\n";

// A small cluster section (2 nodes x 4 GPUs), to inline after "cluster:".
inline const char* const kInlineCluster = R"(
  name: c
  gpu:
    name: g
    peak_flops: {bf16: 100 TFLOPS}
    memory: 40 GiB
    memory_bandwidth: 1 TB/s
  nodes: 2
  gpus_per_node: 4
  nvlink: {bandwidth: 100 GB/s, latency: 1 us}
  network: {nic_bandwidth: 100 Gbps, latency: 3 us}
)";

}  // namespace trident::testing

#endif  // TRIDENT_TESTS_CONFIG_SUPPORT_H_
