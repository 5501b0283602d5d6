// Checking input without simulating: every problem of a file, uneven pipeline splits, the
// scenario's overrides, Hugging Face imports, and the limits that refuse hostile input fast.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/checks.h"
#include "config/diagnostics.h"
#include "config/json_tree.h"
#include "config/pipeline_split.h"
#include "config/scenario.h"
#include "config/yaml_tree.h"
#include "core/errors.h"

using namespace trident;

namespace {

std::string repo(const std::string& rel) { return std::string(TRIDENT_SOURCE_DIR) + "/" + rel; }

// Writes `text` to `name` in a fresh temporary directory; returns the path.
std::string write_temp(const std::string& name, const std::string& text) {
  namespace fs = std::filesystem;
  static int counter = 0;
  const fs::path dir =
      fs::temp_directory_path() /
      ("trident_test_validate_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  fs::create_directories(dir / std::filesystem::path(name).parent_path());
  std::ofstream(dir / name, std::ios::binary) << text;
  return (dir / name).string();
}

std::vector<std::string> problems(const std::string& path,
                                  const std::vector<std::string>& overrides = {}) {
  Diagnostics diag;
  check_config_file(path, overrides, &diag);
  std::vector<std::string> out;
  for (const Problem& p : diag.problems()) out.push_back(p.text());
  return out;
}

std::string load_error(const std::string& path, const std::vector<std::string>& overrides = {}) {
  try {
    load_scenario(path, overrides);
  } catch (const ConfigError& e) {
    return e.what();
  }
  FAIL("no ConfigError for " << path);
  return "";
}

const std::string kScenarioHead = "cluster: " + repo("configs/clusters/dgx-a100-superpod.yaml") +
                                  "\nmodel: " + repo("configs/models/gpt3-175b.yaml") + "\n";

// Seconds `f` takes.
template <typename F>
double seconds(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("validation lists every problem of a file, in file order", "[validate]") {
  const std::string path = write_temp("many.yaml", kScenarioHead +
                                                       "plan:\n"
                                                       "  tensor_parallel: 0\n"    // 4
                                                       "  pipeline_parallel: x\n"  // 5
                                                       "  micro_batch_size: 1\n"
                                                       "  global_batch_size: 8\n"
                                                       "  schedule: zigzag\n"         // 8
                                                       "  recompute: some\n"          // 9
                                                       "  colour: blue\n"             // 10
                                                       "  pipeline_layers: [a, 2]\n"  // 11
                                                       "  grad_bucket_size: -1\n");   // 12
  const std::vector<std::string> p = problems(path);
  REQUIRE(p.size() == 7);
  CHECK_THAT(p[0], Catch::Contains(":10:3: plan.colour: unknown key `colour`"));
  CHECK_THAT(p[1], Catch::Contains(":4:20: plan.tensor_parallel: 0 is too small"));
  CHECK_THAT(p[2], Catch::Contains(":5:22: plan.pipeline_parallel: `x` is not an integer"));
  CHECK_THAT(p[3], Catch::Contains(":8:13: plan.schedule: unknown value `zigzag` (expected "
                                   "one of: gpipe, 1f1b, interleaved-1f1b)"));
  CHECK_THAT(p[4], Catch::Contains(":9:14: plan.recompute: unknown value `some`"));
  CHECK_THAT(p[5], Catch::Contains(":12:21: plan.grad_bucket_size: -1 is too small"));
  CHECK_THAT(p[6], Catch::Contains(":11:21: plan.pipeline_layers: the value `a` is not a layer"));
  // The loader stops at the first.
  CHECK(load_error(path) == p[0]);
}

TEST_CASE("validation reports every duplicate key and goes on", "[validate][yaml]") {
  const std::string path = write_temp("dups.yaml", kScenarioHead +
                                                       "plan:\n  micro_batch_size: 1\n"
                                                       "  micro_batch_size: 2\n"
                                                       "  num_microbatches: 4\n"
                                                       "  num_microbatches: 8\n"
                                                       "  schedule: nope\n");
  const std::vector<std::string> p = problems(path);
  REQUIRE(p.size() == 3);
  CHECK_THAT(p[0], Catch::Contains(":5:3: plan.micro_batch_size: duplicate key (first given at "
                                   "line 4"));
  CHECK_THAT(p[1], Catch::Contains(":7:3: plan.num_microbatches: duplicate key"));
  CHECK_THAT(p[2], Catch::Contains(":8:13: plan.schedule: unknown value `nope`"));
}

TEST_CASE("problems in referenced files and sections are all found", "[validate]") {
  const std::string cluster = write_temp("c/cluster.yaml",
                                         "name: c\ngpu: ../g/gpu.yaml\nnodes: 0\n"
                                         "gpus_per_node: 8\nnvlink: {bandwidth: 300 GB/s, "
                                         "latency: 2 us}\nnetwork: {nic_bandwidth: 200, "
                                         "latency: 5 us}\n");
  const std::string dir = std::filesystem::path(cluster).parent_path().parent_path().string();
  std::filesystem::create_directories(dir + "/g");
  std::ofstream(dir + "/g/gpu.yaml") << "name: g\npeak_flops: {bf16: 312 TFLOPS}\n"
                                        "memory: 80 GiB\nmemory_bandwidth: 2 us\n";
  std::ofstream(dir + "/s.yaml") << "cluster: c/cluster.yaml\nmodel: missing.yaml\n"
                                    "plan: {micro_batch_size: 0, num_microbatches: 1}\n";
  const std::vector<std::string> p = problems(dir + "/s.yaml");
  REQUIRE(p.size() == 5);
  CHECK_THAT(p[0], Catch::Contains("s.yaml:2:8: model: cannot read `missing.yaml`"));
  CHECK_THAT(p[1], Catch::Contains("g/gpu.yaml:4:19: cluster.gpu.memory_bandwidth: `2 us` is a "
                                   "time, expected a bandwidth"));
  CHECK_THAT(p[2], Catch::Contains("c/cluster.yaml:3:8: cluster.nodes: 0 is too small"));
  CHECK_THAT(p[3], Catch::Contains("c/cluster.yaml:6:26: cluster.network.nic_bandwidth: `200` "
                                   "has no unit"));
  CHECK_THAT(p[4], Catch::Contains("s.yaml:3:26: plan.micro_batch_size: 0 is too small"));
  // A stand-alone cluster file: the same two problems of its own and its GPU's.
  CHECK(problems(cluster).size() == 3);
}

TEST_CASE("validation stops listing after 100 problems", "[validate]") {
  std::string text = kScenarioHead + "plan:\n  micro_batch_size: 1\n  num_microbatches: 1\n";
  for (int i = 0; i < 300; ++i) text += "  bogus" + std::to_string(i) + ": 1\n";
  Diagnostics diag;
  check_config_file(write_temp("many_keys.yaml", text), {}, &diag);
  CHECK(diag.problems().size() == 100);
  CHECK(diag.count() >= 100);
}

TEST_CASE("an uneven split: pipeline_layers and decoder_first/last", "[validate][split]") {
  const std::string scenario = repo("scenarios/gpt3-175b-3d.yaml");
  Scenario s = load_scenario(scenario, {"plan.pipeline_layers=[11, 12, 12, 13, 13, 12, 12, 11]"});
  CHECK(s.plan.pipeline_layers == std::vector<int>{11, 12, 12, 13, 13, 12, 12, 11});

  s = load_scenario(scenario, {"plan.decoder_first_pipeline_num_layers=6",
                               "plan.decoder_last_pipeline_num_layers=6"});
  CHECK(s.plan.pipeline_layers == std::vector<int>{6, 14, 14, 14, 14, 14, 14, 6});

  // Only the first given: the other seven stages share the rest.
  s = load_scenario(scenario, {"plan.decoder_first_pipeline_num_layers=5"});
  CHECK(s.plan.pipeline_layers == std::vector<int>{5, 13, 13, 13, 13, 13, 13, 13});

  // Interleaved: each stage's layers split over its chunks; chunk c of stage s at c * p + s.
  s = load_scenario(scenario, {"plan.schedule=interleaved-1f1b", "plan.virtual_stages=2",
                               "plan.decoder_first_pipeline_num_layers=6",
                               "plan.decoder_last_pipeline_num_layers=6"});
  CHECK(s.plan.pipeline_layers == std::vector<int>{3, 7, 7, 7, 7, 7, 7, 3, 3, 7, 7, 7, 7, 7, 7, 3});

  // Setting one way of splitting drops the other.
  s = load_scenario(scenario, {"plan.decoder_first_pipeline_num_layers=6",
                               "plan.pipeline_layers=[12, 12, 12, 12, 12, 12, 12, 12]"});
  CHECK(s.plan.pipeline_layers == std::vector<int>(8, 12));

  CHECK_THAT(load_error(scenario, {"plan.decoder_first_pipeline_num_layers=7",
                                   "plan.decoder_last_pipeline_num_layers=7"}),
             Catch::Contains("--set plan.decoder_first_pipeline_num_layers=7: "
                             "plan.decoder_first_pipeline_num_layers: cannot split the layers: "
                             "leaves 82 of model.num_layers 96"));
}

TEST_CASE("split proposals for models whose layers do not divide", "[validate][split]") {
  CHECK(balanced_split(70, 12, 1) == std::vector<int>{5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5});
  CHECK(balanced_split(70, 8, 1) == std::vector<int>{8, 9, 9, 9, 9, 9, 9, 8});
  CHECK(balanced_split(10, 4, 1) == std::vector<int>{2, 3, 3, 2});
  CHECK(propose_split(70, 12, 1) ==
        "pipeline_layers: [5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5] or "
        "decoder_first_pipeline_num_layers: 5, decoder_last_pipeline_num_layers: 5");
  CHECK(propose_split(7, 2, 1) == "pipeline_layers: [3, 4]");
  for (int layers : {7, 70, 95, 126, 1000}) {
    for (int p : {2, 3, 5, 7}) {
      for (int v : {1, 2, 3}) {
        if (layers < p * v) continue;
        const std::vector<int> split = balanced_split(layers, p, v);
        int sum = 0;
        for (int n : split) sum += n;
        CHECK(sum == layers);
        CHECK(split.size() == static_cast<size_t>(p * v));
      }
    }
  }
  std::string why;
  CHECK_FALSE(first_last_split(96, 1, 1, 5, std::nullopt, &why));
  CHECK_THAT(why, Catch::Contains("needs pipeline_parallel >= 2"));
  CHECK(first_last_split(10, 2, 1, 4, 6, &why) == std::vector<int>{4, 6});
  CHECK_FALSE(first_last_split(10, 2, 1, 4, 5, &why));
}

TEST_CASE("grad_bucket_size and untied embeddings are read", "[validate]") {
  const Scenario s = load_scenario(
      repo("scenarios/gpt3-175b-3d.yaml"),
      {"plan.grad_bucket_size=25000000", "model.untie_embeddings_and_output_weights=true"});
  CHECK(s.plan.grad_bucket_size == 25000000);
  CHECK(s.model.untie_embeddings_and_output_weights);
  const Scenario d = load_scenario(repo("scenarios/gpt3-175b-3d.yaml"), {});
  CHECK(d.plan.grad_bucket_size == 0);
  CHECK_FALSE(d.model.untie_embeddings_and_output_weights);
}

TEST_CASE("a scenario's overrides: apply before --set, with their own positions",
          "[validate][overrides]") {
  const std::string path =
      write_temp("o.yaml", kScenarioHead +
                               "plan: {tensor_parallel: 8, pipeline_parallel: 8, "
                               "micro_batch_size: 1, num_microbatches: 8}\n"
                               "overrides:\n  cluster.nodes: 16\n  model.seq_length: 4096\n");
  const Scenario s = load_scenario(path, {});
  CHECK(s.cluster.total_gpus() == 128);
  CHECK(s.plan.data == 2);
  CHECK(s.model.seq_length == 4096);
  CHECK(load_scenario(path, {"model.seq_length=1024"}).model.seq_length == 1024);
  const std::string bad = write_temp("ob.yaml", kScenarioHead +
                                                    "plan: {micro_batch_size: 1, "
                                                    "num_microbatches: 8}\n"
                                                    "overrides:\n  cluster.nodes: 0\n");
  CHECK_THAT(load_error(bad), Catch::Contains("ob.yaml:5:18: cluster.nodes: 0 is too small"));
}

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

TEST_CASE("JSON trees keep positions and refuse duplicates", "[validate][json]") {
  const YamlNodePtr root = parse_json(
      "{\n  \"a\": [1, -2.5e3, \"x\\\"y\"],\n  \"b\": {\"c\": true, \"d\": null}\n}", "t.json");
  REQUIRE(root->is_map());
  const YamlNode* a = find_path(*root, "a");
  REQUIRE(a->is_sequence());
  CHECK(a->mark.line == 2);
  CHECK(a->mark.column == 8);
  CHECK(a->items[1]->scalar == "-2.5e3");
  CHECK(a->items[1]->mark.column == 12);
  CHECK(a->items[2]->scalar == "x\"y");
  CHECK(a->items[2]->quoted);
  CHECK(a->items[2]->mark.column == 20);
  CHECK(find_path(*root, "b.c")->scalar == "true");
  CHECK(find_path(*root, "b.d")->is_null());
  const YamlEntry* entry = nullptr;
  find_path(*root, "b.c", &entry);
  CHECK(entry->key_mark.line == 3);
  CHECK(entry->key_mark.column == 9);
  CHECK_THROWS_WITH(parse_json("{\"a\": 1, \"a\": 2}", "d.json"),
                    Catch::Contains("d.json:1:10: a: duplicate key"));
  CHECK_THROWS_WITH(parse_json("{\"a\": 1,\n \"b\" 2}", "s.json"),
                    Catch::StartsWith("s.json:2:6: JSON syntax error: "));
  CHECK_THROWS_WITH(parse_json("{\"a\": NaN}", "n.json"),
                    Catch::StartsWith("n.json:1:7: JSON syntax error"));
  CHECK_THROWS_WITH(parse_json(std::string(100, '[') + std::string(100, ']'), "deep.json"),
                    Catch::Contains("nested more than 64 levels"));
  CHECK_THROWS_WITH(parse_json("", "e.json"), Catch::Contains("unexpected end of input"));
}

TEST_CASE("hostile input is refused quickly with the limit named", "[validate][limits]") {
  // A file over 1 MiB is refused from its size, before it is read.
  const std::string huge = write_temp("huge.yaml", std::string(17 << 20, '#'));
  std::string message;
  CHECK(seconds([&] { message = load_error(huge); }) < 2);
  CHECK_THAT(message, Catch::Contains("more than the limit of 1 MiB for a configuration file"));
  // A device without a size is read only up to the limit.
  CHECK_THAT(load_error("/dev/zero"), Catch::Contains("/dev/zero: file is larger than the limit "
                                                      "of 1 MiB"));

  // Just under the size limit, a flood of flow brackets (which yaml-cpp would queue as
  // possible keys, hundreds of bytes each) is refused before parsing; a flat list of the
  // same size parses within a second.
  const std::string flood = write_temp("flood.yaml", std::string("[\n").append((1 << 20) - 8, '['));
  CHECK(seconds([&] {
          CHECK_THAT(load_error(flood), Catch::Contains(":2:256: more than 256 unclosed '[' or "
                                                        "'{' (maps and lists nested deeper"));
        }) < 1);
  std::string flat = "[";
  while (flat.size() < (1 << 20) - 16) flat += "a, ";
  const std::string flat_file = write_temp("flat.yaml", flat + "a]");
  CHECK(seconds([&] { CHECK_THAT(load_error(flat_file), Catch::Contains("100000 values")); }) < 3);

  // Billion laughs: ten aliases of ten aliases ... expand to 10^9 values.
  std::string laughs = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 10; ++i) {
    laughs += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) laughs += (j ? ", *a" : "*a") + std::to_string(i - 1);
    laughs += "]\n";
  }
  CHECK(seconds([&] {
          CHECK_THROWS_WITH(parse_yaml(laughs, "laughs.yaml"),
                            Catch::Contains("more than 100000 values (aliases expanded)"));
        }) < 5);

  // Deep nesting, directly or through aliases.
  CHECK_THROWS_WITH(parse_yaml("a: " + std::string(200, '[') + std::string(200, ']'), "d.yaml"),
                    Catch::Contains("nested more than 64 levels deep"));
  std::string chain = "a0: &a0 [[[[[[[[[[x]]]]]]]]]]\n";
  for (int i = 1; i < 10; ++i) {
    chain += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [[[[[[[[[*a" +
             std::to_string(i - 1) + "]]]]]]]]]\n";
  }
  CHECK_THROWS_WITH(parse_yaml(chain, "chain.yaml"), Catch::Contains("nested more than 64"));

  // A map with many keys is checked in linear time.
  std::string wide = "{";
  for (int i = 0; i < 40000; ++i) wide += "k" + std::to_string(i) + ": 1, ";
  wide += "k0: 2}";
  CHECK(seconds([&] {
          CHECK_THROWS_WITH(parse_yaml(wide, "wide.yaml"), Catch::Contains("k0: duplicate key"));
        }) < 10);

  // A billion-layer model, and plans that would keep the engine busy for hours.
  const std::string scenario = repo("scenarios/gpt3-175b-3d.yaml");
  CHECK_THAT(load_error(scenario, {"model.num_layers=1000000000"}),
             Catch::Contains("1000000000 exceeds the limit of 100000"));
  CHECK_THAT(load_error(scenario, {"cluster.nodes=1000000"}),
             Catch::Contains("cluster has 8000000 GPUs (nodes × gpus_per_node), more than the "
                             "limit of 1000000"));
  CHECK_THAT(load_error(scenario, {"plan.num_microbatches=9000000"}),
             Catch::Contains("more than the schedule-instruction limit of 10000000"));
  CHECK_THAT(load_error(scenario, {"plan.num_microbatches=100000"}),
             Catch::Contains("more than the simulation-activity limit of 100000000"));
}

TEST_CASE("the simulation-size estimate accounts for fidelity", "[validate][limits]") {
  const Scenario s = load_scenario(repo("scenarios/gpt3-175b-3d.yaml"), {});
  const double fast = estimated_sim_activities(s.plan, s.model, s.cluster, false);
  const double full = estimated_sim_activities(s.plan, s.model, s.cluster, true);
  CHECK(fast > 46344);  // measured: an upper bound
  CHECK(fast < 1e7);
  CHECK(full > 10 * fast);
  CHECK(simulation_size_issues(s.plan, s.model, s.cluster, false).empty());
  // GPT-3 at full fidelity runs for more than ten minutes: refused.
  const auto issues = simulation_size_issues(s.plan, s.model, s.cluster, true);
  REQUIRE(issues.size() == 1);
  CHECK_THAT(issues[0].message, Catch::Contains("or --fidelity fast"));
  const Scenario tiny = load_scenario(repo("scenarios/tiny.yaml"), {});
  CHECK(simulation_size_issues(tiny.plan, tiny.model, tiny.cluster, true).empty());
}

TEST_CASE("messages stay on one line and quote long values briefly", "[validate]") {
  CHECK(excerpt("a\nb\tc\x01") == "a\\nb\\tc\\x01");
  CHECK(excerpt(std::string(100, 'x')) == std::string(60, 'x') + "...");
  const std::string path = write_temp("long.yaml", kScenarioHead +
                                                       "plan:\n  micro_batch_size: 1\n"
                                                       "  num_microbatches: 1\n  schedule: \"" +
                                                       std::string(100000, 'z') + "\"\n");
  const std::string e = load_error(path);
  CHECK(e.size() < 400);
  CHECK(e.find('\n') == std::string::npos);
}
