// Hugging Face config.json imports (config/hf_import): the shipped Llama 3 models, GPT- and
// BLOOM-style files, and hf: model references in scenarios.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/diagnostics.h"
#include "config/hf_import.h"
#include "config_support.h"
#include "core/errors.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

TEST_CASE("hf: model references, with the sequence length from the scenario", "[validate][hf]") {
  const std::string dir = repo("tests/data/hf");
  const std::string path = write_temp(
      "hf.yaml", "cluster: " + repo("configs/clusters/dgx-h100.yaml") + "\nmodel: hf:" + dir +
                     "/Meta-Llama-3-8B\nplan: {tensor_parallel: 8, micro_batch_size: 1, "
                     "num_microbatches: 4, data_parallel: 1}\n"
                     "overrides:\n  model.seq_length: 4096\n");
  const Scenario s = load_scenario(path, {});
  CHECK(s.model.name == "Meta-Llama-3-8B");
  CHECK(s.model.seq_length == 4096);  // from the scenario (max_position_embeddings is 8192)
  CHECK(s.model.num_query_groups == 8);
  CHECK(s.model.swiglu);
  CHECK(s.model.untie_embeddings_and_output_weights);
  CHECK_FALSE(s.model.learned_position_embeddings);
  CHECK(load_scenario(path, {"model.seq_length=2048"}).model.seq_length == 2048);
  // A plain .json path is a Hugging Face config too; the overridden value names --set.
  CHECK_THAT(load_error(path, {"model.num_layers=0"}),
             Catch::StartsWith("--set model.num_layers=0: model.num_layers: 0 is too small"));
}

TEST_CASE("GPT-style and BLOOM-style config.json files", "[validate][hf]") {
  const std::string gpt2 =
      write_temp("gpt2/config.json",
                 R"({"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12,
          "n_positions": 1024, "vocab_size": 50257, "activation_function": "gelu_new",
          "n_inner": null})");
  const ModelSpec g = check_config_file(gpt2, {"model.seq_length=1024"}, nullptr).specs.model;
  CHECK(g.name == "gpt2");
  CHECK(g.num_layers == 12);
  CHECK(g.ffn_hidden_size == 4 * 768);
  CHECK_FALSE(g.swiglu);
  CHECK(g.learned_position_embeddings);
  CHECK_FALSE(g.untie_embeddings_and_output_weights);  // tie_word_embeddings defaults to true
  const std::string bloom =
      write_temp("bloom.json", R"({"model_type": "bloom", "n_layer": 70, "hidden_size": 14336,
                                   "n_head": 112, "seq_length": 2048, "vocab_size": 250880})");
  const ModelSpec b = load_model_file(bloom);
  CHECK(b.name == "bloom");
  CHECK_FALSE(b.learned_position_embeddings);  // ALiBi
}

TEST_CASE("a Hugging Face config.json imports the shipped Llama 3 models", "[library][hf]") {
  struct Pair {
    const char* json;
    const char* yaml;
  };
  for (const Pair& p :
       {Pair{"Meta-Llama-3-8B", "llama3-8b"}, Pair{"Meta-Llama-3-70B", "llama3-70b"},
        Pair{"Llama-3.1-405B", "llama3-405b"}}) {
    INFO(p.json);
    // A config.json has no training length: it comes from --set (or a scenario).
    const ModelSpec hf = check_config_file(repo("tests/data/hf/") + p.json + "/config.json",
                                           {"model.seq_length=8192"}, nullptr)
                             .specs.model;
    const ModelSpec yaml = load_model_file(repo("configs/models/") + p.yaml + ".yaml");
    CHECK(hf.name == p.json);
    CHECK(hf.num_layers == yaml.num_layers);
    CHECK(hf.hidden_size == yaml.hidden_size);
    CHECK(hf.num_attention_heads == yaml.num_attention_heads);
    CHECK(hf.num_query_groups == yaml.num_query_groups);
    CHECK(hf.ffn_hidden_size == yaml.ffn_hidden_size);
    CHECK(hf.vocab_size == yaml.vocab_size);
    CHECK(hf.swiglu == yaml.swiglu);
    CHECK(hf.learned_position_embeddings == yaml.learned_position_embeddings);
    CHECK(hf.untie_embeddings_and_output_weights == yaml.untie_embeddings_and_output_weights);
    CHECK(model_params(hf) == Approx(model_params(yaml)));
  }
  // max_position_embeddings (131072 for Llama 3.1) is the context window, not the training
  // length: without one the import is refused, saying how to give it.
  const std::string llama31 = repo("tests/data/hf/Llama-3.1-405B/config.json");
  try {
    load_model_file(llama31);
    FAIL("a config.json without a training length loaded");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("model.seq_length: missing required key") &&
                             Catch::Contains("--set model.seq_length=N"));
  }
  CHECK(check_config_file(llama31, {"model.seq_length=8192"}, nullptr).specs.model.seq_length ==
        8192);
}

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
std::string listed_problems(const std::string& path, const std::vector<std::string>& sets) {
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

TEST_CASE("one expert is a dense MLP", "[hf]") {
  const std::string one =
      write_config("one-expert", std::string(kDense) + R"(, "num_experts": 1})");
  CHECK(listed_problems(one, {"model.seq_length=4096"}).empty());
}

TEST_CASE("the training length comes from the scenario, never max_position_embeddings", "[hf]") {
  const std::string path = write_config("mistral", std::string(kDense) + "}");
  const std::string listed = listed_problems(path, {});
  CHECK_THAT(listed, Catch::Contains("model.seq_length: missing required key"));
  CHECK_THAT(listed, Catch::Contains("--set model.seq_length=N"));
  CHECK(listed_problems(path, {"model.seq_length=8192"}).empty());
  CHECK(check_config_file(path, {"model.seq_length=8192"}, nullptr).specs.model.seq_length == 8192);
}

TEST_CASE("a null field is blamed where it is written", "[hf]") {
  const std::string path = write_config(
      "null-layers", R"({"num_hidden_layers": null, "hidden_size": 1024, "num_attention_heads": 16,
                        "vocab_size": 1000})");
  const std::string listed = listed_problems(path, {"model.seq_length=1024"});
  CHECK_THAT(listed, Catch::Contains("config.json:1:2: model.num_hidden_layers: no value given"));
  CHECK_THAT(listed, !Catch::Contains(":1:1:"));
}

TEST_CASE("Hugging Face import maps dropout and rms_norm_eps", "[hf]") {
  const ModelSpec llama = check_config_file(repo("tests/data/hf/Meta-Llama-3-8B/config.json"),
                                            {"model.seq_length=8192"}, nullptr)
                              .specs.model;
  CHECK(llama.attention_dropout == 0);
  CHECK(llama.hidden_dropout == 0);
  CHECK(llama.rms_norm);
  CHECK(llama.rotary_position_embeddings);
  // The shipped GPT-3 keeps Megatron's defaults.
  const ModelSpec gpt = load_model_file(repo("configs/models/gpt3-175b.yaml"));
  CHECK(gpt.attention_dropout == Approx(0.1));
  CHECK(gpt.hidden_dropout == Approx(0.1));
  CHECK(!gpt.rms_norm);
}

TEST_CASE("validate of a config.json alone refuses top-k above the experts", "[hf][validate]") {
  const std::string path = write_config(
      "topk", std::string(kDense) + R"(, "num_local_experts": 8, "num_experts_per_tok": 10})");
  const std::string listed = listed_problems(path, {"model.seq_length=4096"});
  // At num_experts_per_tok's value (line 3), under trident's name.
  CHECK_THAT(listed, Catch::Contains("config.json:3:133: model.moe_router_topk: moe_router_topk "
                                     "10 exceeds num_experts 8"));
  const std::string fine = write_config(
      "topk-ok", std::string(kDense) + R"(, "num_local_experts": 8, "num_experts_per_tok": 2})");
  CHECK(listed_problems(fine, {"model.seq_length=4096"}).empty());
}

TEST_CASE("a config.json's model_type must be a decoder-only transformer", "[hf][validate]") {
  int written = 0;
  const auto with_type = [&](const std::string& type) {
    std::string j = kDense;
    j.replace(j.find("\"mistral\""), 9, type);
    return write_config("type-" + std::to_string(written++), j + "}");
  };
  for (const char* bad : {"\"bert\"", "\"t5\"", "\"mamba\"", "\"no-such-model\"", "7"}) {
    INFO(bad);
    const std::string listed = listed_problems(with_type(bad), {"model.seq_length=4096"});
    CHECK_THAT(listed, Catch::Contains("config.json:1:16: model.model_type: model_type "));
    CHECK_THAT(listed, Catch::Contains("is not a decoder-only transformer trident models"));
  }
  for (const char* good : {"\"llama\"", "\"qwen2_moe\"", "\"gpt2\"", "\"deepseek_v3\"", "null"}) {
    INFO(good);
    CHECK(listed_problems(with_type(good), {"model.seq_length=4096"}).empty());
  }
  // Without model_type (older configs) the sizes alone are read.
  const std::string untyped = write_config(
      "untyped", R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 2,
                     "vocab_size": 100, "seq_length": 64})");
  CHECK(listed_problems(untyped, {}).empty());
}
