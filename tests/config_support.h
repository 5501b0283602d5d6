// Helpers for tests of input files (src/config): temporary files, and what loading or
// checking a file reports.
#ifndef TRIDENT_TESTS_CONFIG_SUPPORT_H_
#define TRIDENT_TESTS_CONFIG_SUPPORT_H_

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "config/diagnostics.h"
#include "config/scenario.h"
#include "config/shell_words.h"
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

// A shell environment holding `vars` only (launch scripts' $VAR expansion).
inline ShellEnvironment environment(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// The tiny scenario (t=2 p=2 d=2 on 8 A100) made a SwiGLU MoE: 8 experts of 512, top-2, EP 2
// with the alltoall dispatcher; then `more`.
inline Scenario tiny_moe(const std::vector<std::string>& more = {}) {
  std::vector<std::string> sets = {"model.num_experts=8",
                                   "model.moe_router_topk=2",
                                   "model.moe_ffn_hidden_size=512",
                                   "model.swiglu=true",
                                   "model.ffn_hidden_size=2048",
                                   "plan.sequence_parallel=true",
                                   "plan.expert_model_parallel_size=2",
                                   "plan.moe_token_dispatcher_type=alltoall"};
  sets.insert(sets.end(), more.begin(), more.end());
  return load_scenario(repo("scenarios/tiny.yaml"), sets);
}

}  // namespace trident::testing

#endif  // TRIDENT_TESTS_CONFIG_SUPPORT_H_
