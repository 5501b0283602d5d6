// Library names: `cluster: dgx-h100`, `model: llama3-70b`, `gpu: h100-sxm5-80gb` and
// scenarios by name, the search order (relative path, TRIDENT_PATH, installed, source tree),
// unknown names with close ones, and whole sections swapped by --set / overrides.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "config/diagnostics.h"
#include "config/references.h"
#include "config/scenario.h"
#include "config/schema.h"
#include "core/errors.h"

using namespace trident;
namespace fs = std::filesystem;

namespace {

std::string repo(const std::string& rel) { return std::string(TRIDENT_SOURCE_DIR) + "/" + rel; }

// A fresh, empty temporary directory.
fs::path fresh_dir(const std::string& tag) {
  static int counter = 0;
  const fs::path dir = fs::temp_directory_path() / ("trident_refs_" + std::to_string(::getpid()) +
                                                    "_" + tag + std::to_string(counter++));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

std::string load_error(const std::string& path, const std::vector<std::string>& sets = {}) {
  try {
    load_scenario(path, sets);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// Sets TRIDENT_PATH for the scope of one test.
struct TridentPath {
  explicit TridentPath(const std::string& value) { ::setenv("TRIDENT_PATH", value.c_str(), 1); }
  ~TridentPath() { ::unsetenv("TRIDENT_PATH"); }
};

const char* const kPlan =
    "plan:\n  tensor_parallel: 8\n  pipeline_parallel: 1\n  data_parallel: 1\n"
    "  micro_batch_size: 1\n  global_batch_size: 8\n";

}  // namespace

TEST_CASE("what is written as a library name", "[references]") {
  CHECK(is_library_name("dgx-h100"));
  CHECK(is_library_name("gpt-3.6b"));
  CHECK_FALSE(is_library_name("../configs/clusters/dgx-h100.yaml"));
  CHECK_FALSE(is_library_name("dgx-h100.yaml"));
  CHECK_FALSE(is_library_name("config.json"));
  CHECK_FALSE(is_library_name("hf:llama"));
  CHECK_FALSE(is_library_name(""));
}

TEST_CASE("the shipped library is found by name", "[references]") {
  CHECK(find_library_file("dgx-h100", ConfigFileKind::kCluster) ==
        fs::path(repo("configs/clusters/dgx-h100.yaml")).lexically_normal().string());
  CHECK(!find_library_file("llama3-70b", ConfigFileKind::kModel).empty());
  CHECK(!find_library_file("h100-sxm5-80gb", ConfigFileKind::kGpu).empty());
  CHECK(!find_library_file("llama3-70b-dgx-h100", ConfigFileKind::kScenario).empty());
  CHECK(find_library_file("dgx-h100", ConfigFileKind::kModel).empty());
  CHECK(find_library_file("no-such-cluster", ConfigFileKind::kCluster).empty());
  bool b200 = false;
  for (const LibraryEntry& e : library_entries(ConfigFileKind::kCluster)) {
    b200 = b200 || e.name == "hgx-b200";
  }
  CHECK(b200);
}

TEST_CASE("a scenario names its cluster and model; a scenario is found by name", "[references]") {
  const fs::path dir = fresh_dir("names");
  write(dir / "s.yaml", std::string("cluster: dgx-h100\nmodel: llama3-8b\n") + kPlan);
  const Scenario s = load_scenario((dir / "s.yaml").string(), {});
  CHECK(s.cluster.name == "dgx-h100");
  CHECK(s.model.name == "llama3-8b");
  CHECK(load_scenario("llama3-70b-dgx-h100", {}).cluster.total_gpus() == 512);
}

TEST_CASE("a shipped cluster copied anywhere keeps working", "[references]") {
  const fs::path dir = fresh_dir("copy");
  fs::copy_file(repo("configs/clusters/hgx-b200.yaml"), dir / "mine.yaml");
  CHECK(load_cluster_file((dir / "mine.yaml").string()).gpu.name ==
        load_cluster_file(repo("configs/clusters/hgx-b200.yaml")).gpu.name);
}

TEST_CASE("search order: a relative path, then TRIDENT_PATH, then the shipped library",
          "[references]") {
  const fs::path lib = fresh_dir("lib");
  const std::string b200 = repo("configs/clusters/hgx-b200.yaml");
  std::string text;
  {
    std::ifstream in(b200);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const auto with_nodes = [&](int n) {
    return std::regex_replace(text, std::regex("\nnodes: *[0-9]+"),
                              "\nnodes: " + std::to_string(n));
  };
  write(lib / "clusters/dgx-h100.yaml", with_nodes(3));  // shadows the shipped one
  write(lib / "configs/models/tiny-lm.yaml",
        "name: tiny-lm\nnum_layers: 2\nhidden_size: 1024\nnum_attention_heads: 8\n"
        "seq_length: 1024\nvocab_size: 32000\n");
  const fs::path dir = fresh_dir("scen");
  write(dir / "s.yaml", std::string("cluster: dgx-h100\nmodel: tiny-lm\n") + kPlan);
  {
    TridentPath env("/nonexistent:" + lib.string());
    const Scenario s = load_scenario((dir / "s.yaml").string(), {});
    CHECK(s.cluster.nodes == 3);
    CHECK(s.model.name == "tiny-lm");
    // A file of that name next to the scenario comes first.
    write(dir / "dgx-h100", with_nodes(5));
    CHECK(load_scenario((dir / "s.yaml").string(), {}).cluster.nodes == 5);
  }
  fs::remove(dir / "dgx-h100");
  CHECK_THAT(load_error((dir / "s.yaml").string()), Catch::Contains("tiny-lm"));
}

TEST_CASE("an unknown name is refused with the close names", "[references]") {
  const fs::path dir = fresh_dir("unknown");
  write(dir / "s.yaml", std::string("cluster: dgx-h10\nmodel: llama3-8b\n") + kPlan);
  const std::string error = load_error((dir / "s.yaml").string());
  CHECK_THAT(error, Catch::Contains("s.yaml:1:10: cluster: `dgx-h10` is neither a file nor a "
                                    "cluster in the library (did you mean `dgx-h100`?)"));
  CHECK_THAT(load_error("llama3-70b-dgx-h10"),
             Catch::Contains("did you mean `llama3-70b-dgx-h100`"));
  write(dir / "g.yaml", "name: c\ngpu: h100-sxm5-80g\nnodes: 1\ngpus_per_node: 8\n");
  try {
    load_cluster_file((dir / "g.yaml").string());
    FAIL("expected an error");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("did you mean `h100-sxm5-80gb`?"));
  }
}

TEST_CASE("a bare section takes a reference that swaps the whole section", "[references]") {
  CHECK(schema_path_error("cluster").empty());
  CHECK(schema_path_error("model").empty());
  CHECK(schema_path_error("plan").empty());
  CHECK_FALSE(schema_path_error("clusters").empty());
  CHECK_FALSE(schema_path_error("cluster.gpux").empty());

  // --set cluster=NAME is applied before the other sets, whatever their order.
  const Scenario s = load_scenario(
      repo("scenarios/llama3-70b-dgx-h100.yaml"),
      {"cluster.nodes=32", "plan.data_parallel=8", "cluster=hgx-b200", "model=llama3-8b"});
  CHECK(s.cluster.name == "hgx-b200");
  CHECK(s.cluster.nodes == 32);
  CHECK(s.model.name == "llama3-8b");
  // The scenario's own overrides (cluster.nodes: 64) apply to the new cluster.
  CHECK(load_scenario(repo("scenarios/llama3-70b-dgx-h100.yaml"), {"cluster=dgx-a100-superpod"})
            .cluster.total_gpus() == 512);

  const fs::path dir = fresh_dir("swap");
  write(dir / "s.yaml", std::string("cluster: dgx-h100\nmodel: llama3-8b\noverrides:\n"
                                    "  cluster.nodes: 2\n  cluster: hgx-h200\n") +
                            kPlan);
  const Scenario o = load_scenario((dir / "s.yaml").string(), {});
  CHECK(o.cluster.name == "hgx-h200");
  CHECK(o.cluster.nodes == 2);
  CHECK_THAT(load_error((dir / "s.yaml").string(), {"cluster=hgx-b20"}),
             Catch::Contains("--set cluster=hgx-b20: cluster: `hgx-b20` is neither a file nor a "
                             "cluster in the library (did you mean `hgx-b200`?)"));
}

TEST_CASE("an inline cluster names its GPU; --set cluster.gpu swaps it", "[references]") {
  const fs::path dir = fresh_dir("gpu");
  write(dir / "s.yaml",
        std::string("cluster:\n  name: c\n  gpu: h100-sxm5-80gb\n  nodes: 1\n  gpus_per_node: 8\n"
                    "  nvlink: {island_size: 8, bandwidth: 450 GB/s, latency: 2 us}\n"
                    "  network: {nics_per_node: 8, nic_bandwidth: 400 Gbps, latency: 5 us}\n"
                    "model: llama3-8b\n") +
            kPlan);
  CHECK(load_scenario((dir / "s.yaml").string(), {}).cluster.gpu.name ==
        load_cluster_file(repo("configs/clusters/dgx-h100.yaml")).gpu.name);
  CHECK(load_scenario((dir / "s.yaml").string(), {"cluster.gpu=b200"}).cluster.gpu.name ==
        load_cluster_file(repo("configs/clusters/hgx-b200.yaml")).gpu.name);
}

TEST_CASE("a failed section swap is one problem", "[references]") {
  Diagnostics diag;
  check_scenario(repo("scenarios/llama3-70b-dgx-h100.yaml"), {"cluster=hgx-b20"}, &diag);
  REQUIRE(diag.count() == 1);
  CHECK_THAT(diag.problems()[0].message, Catch::Contains("did you mean `hgx-b200`?"));
  const fs::path dir = fresh_dir("badswap");
  write(dir / "s.yaml", std::string("cluster: dgx-h100\nmodel: llama3-8b\noverrides:\n"
                                    "  cluster: nowhere\n  cluster.nodes: 2\n") +
                            kPlan);
  Diagnostics file_diag;
  check_scenario((dir / "s.yaml").string(), {}, &file_diag);
  CHECK(file_diag.count() == 1);
}
