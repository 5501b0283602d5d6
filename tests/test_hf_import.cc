// Hugging Face config.json imports (config/hf_import): the shipped Llama 3 models, GPT- and
// BLOOM-style files, and hf: model references in scenarios.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config/hf_import.h"
#include "config_support.h"
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
  CHECK(s.model.seq_length == 4096);  // max_position_embeddings 8192, overridden
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
  const ModelSpec g = load_model_file(gpt2);
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
    const ModelSpec hf = load_model_file(repo("tests/data/hf/") + p.json + "/config.json");
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
  // seq_length is max_position_embeddings: 131072 for Llama 3.1.
  CHECK(load_model_file(repo("tests/data/hf/Llama-3.1-405B/config.json")).seq_length == 131072);
}
