// Hugging Face config.json import (config/hf_import.h): what it refuses rather than guess.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "config/diagnostics.h"
#include "config/scenario.h"
#include "core/errors.h"

using namespace trident;

namespace {

// Writes `json` as config.json in a fresh directory; returns the file's path.
std::string write_config(const std::string& name, const std::string& json) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("trident_test_hf_" + std::to_string(::getpid())) / name;
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << json;
  return (dir / "config.json").string();
}

// Returns every problem `validate` lists for `path` with `sets`, one per line.
std::string problems(const std::string& path, const std::vector<std::string>& sets) {
  Diagnostics diag;
  check_config_file(path, sets, &diag);
  std::string out;
  for (const Problem& p : diag.problems()) out += p.text() + "\n";
  return out;
}

const char* kDense =
    R"({"model_type": "mistral", "num_hidden_layers": 32, "hidden_size": 4096,
        "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
        "vocab_size": 32000, "max_position_embeddings": 32768, "hidden_act": "silu")";

}  // namespace

TEST_CASE("mixture-of-experts configs are refused, naming the field", "[hf]") {
  struct Case {
    const char* name;
    const char* field;
  };
  for (const Case& c :
       {Case{"mixtral", R"("num_local_experts": 8, "num_experts_per_tok": 2)"},
        Case{"qwen-moe", R"("num_experts": 60, "moe_intermediate_size": 1408)"},
        Case{"deepseek", R"("n_routed_experts": 256, "first_k_dense_replace": 3)"}}) {
    INFO(c.name);
    const std::string path = write_config(c.name, std::string(kDense) + ", " + c.field + "}");
    const std::string listed = problems(path, {"model.seq_length=4096"});
    CHECK_THAT(listed, Catch::Contains("this is a mixture-of-experts config"));
    CHECK_THAT(listed, Catch::Contains("will not simulate it as a dense model"));
  }
  // One expert is a dense MLP.
  const std::string one =
      write_config("one-expert", std::string(kDense) + R"(, "num_experts": 1})");
  CHECK(problems(one, {"model.seq_length=4096"}).empty());
}

TEST_CASE("the training length comes from the scenario, never max_position_embeddings", "[hf]") {
  const std::string path = write_config("mistral", std::string(kDense) + "}");
  const std::string listed = problems(path, {});
  CHECK_THAT(listed, Catch::Contains("model.seq_length: missing required key"));
  CHECK_THAT(listed, Catch::Contains("--set model.seq_length=N"));
  CHECK(problems(path, {"model.seq_length=8192"}).empty());
  CHECK(check_config_file(path, {"model.seq_length=8192"}, nullptr).specs.model.seq_length == 8192);
}

TEST_CASE("a null field is blamed where it is written", "[hf]") {
  const std::string path = write_config(
      "null-layers", R"({"num_hidden_layers": null, "hidden_size": 1024, "num_attention_heads": 16,
                        "vocab_size": 1000})");
  const std::string listed = problems(path, {"model.seq_length=1024"});
  CHECK_THAT(listed, Catch::Contains("config.json:1:2: model.num_hidden_layers: no value given"));
  CHECK_THAT(listed, !Catch::Contains(":1:1:"));
}
