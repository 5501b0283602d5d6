// libFuzzer target over the whole load-and-validate path (build with -DTRIDENT_FUZZ=ON and
// clang; scripts/fuzz runs it). The first input byte picks how the rest is used:
//   0 a scenario file (it may reference the good cluster.yaml, model.yaml, gpu.yaml and
//     config.json beside it), 1 the plan file of a good scenario, 2 its cluster file, 3 its
//     model file, 4 its Hugging Face config.json, 5 the GPU file of its cluster, 6 `--set`
//     overrides (one per line) of a good scenario, 7 bare YAML and JSON trees, 8 the command
//     line of a sweep or comparison (`--vary`, `--shard`, `--variant` arguments, one per line:
//     axes combined and counted, points expanded within the point limit, the first point's
//     overrides loaded), 9 merge inputs (a sweep CSV file and a FILE.manifest);
// each file is also checked on its own, as `trident validate` does. Invariants, besides "no
// crash, no sanitizer report, no exception other than ConfigError": the first problem that
// validation records is the error loading throws; every message is one located line; a
// scenario that loads builds its workload and pipeline programs.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "cli/compare_variants.h"
#include "cli/sweep_csv.h"
#include "cli/sweep_manifest.h"
#include "cli/sweep_points.h"
#include "config/diagnostics.h"
#include "config/json_tree.h"
#include "config/scenario.h"
#include "config/yaml_tree.h"
#include "core/errors.h"
#include "layout/program.h"
#include "workload/stage_work.h"

namespace {

using namespace trident;

const char* kCluster =
    "name: fuzz-cluster\n"
    "gpu: gpu.yaml\n"
    "nodes: 4\n"
    "gpus_per_node: 8\n"
    "nvlink: {bandwidth: 300 GB/s, latency: 2 us, protocol_efficiency: 0.75}\n"
    "network: {topology: fat-tree, nic_bandwidth: 200 Gbps, latency: 5 us, nodes_per_leaf: 2}\n";
const char* kGpu =
    "name: A100\npeak_flops: {bf16: 312 TFLOPS, fp16: 312 TFLOPS}\nmemory: 80 GiB\n"
    "memory_bandwidth: 2039 GB/s\n"
    "efficiency: {gemm: 0.67, gemm_half_size: 2 GFLOP, memory: 0.9, kernel_overhead: 2 us, "
    "sm_count: 108}\n";
const char* kModel =
    "name: fuzz-model\nnum_layers: 8\nhidden_size: 1024\nnum_attention_heads: 16\n"
    "seq_length: 1024\nvocab_size: 32000\n";
const char* kPlan =
    "tensor_parallel: 2\npipeline_parallel: 2\nmicro_batch_size: 1\nnum_microbatches: 4\n";
const char* kHfConfig =
    "{\"hidden_size\": 1024, \"num_hidden_layers\": 8, \"num_attention_heads\": 16,"
    " \"num_key_value_heads\": 4, \"intermediate_size\": 2816, \"vocab_size\": 32000,"
    " \"max_position_embeddings\": 1024, \"hidden_act\": \"silu\","
    " \"tie_word_embeddings\": false}";

std::string g_dir;

void write(const std::string& name, const std::string& text) {
  std::ofstream(g_dir + "/" + name, std::ios::binary | std::ios::trunc) << text;
}

void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_load invariant broken: %s\n", what.c_str());
  std::abort();
}

void check_message(const std::string& text) {
  if (text.find('\n') != std::string::npos) fail("a message spans lines: " + text);
  if (text.empty()) fail("an empty message");
}

// Loads `path` both ways and checks that they agree.
void load_both_ways(const std::string& path, const std::vector<std::string>& overrides) {
  std::string thrown;
  bool loaded = false;
  Scenario scenario;
  try {
    scenario = load_scenario(path, overrides);
    loaded = true;
  } catch (const ConfigError& e) {
    thrown = e.what();
    check_message(thrown);
  }
  Diagnostics diag;
  check_scenario(path, overrides, &diag);
  for (const Problem& p : diag.problems()) check_message(p.text());
  if (loaded != diag.empty()) fail("load and validation disagree on " + path + ": " + thrown);
  if (!loaded && diag.problems().front().text() != thrown) {
    fail("first problem `" + diag.problems().front().text() + "` is not the thrown `" + thrown +
         "`");
  }
  if (loaded) {
    const Workload w = build_workload(scenario);
    if (w.stages.size() != static_cast<size_t>(scenario.plan.pipeline)) fail("stage count");
    build_programs(scenario.plan);
  }
}

void check_alone(const std::string& path) {
  Diagnostics diag;
  check_config_file(path, {}, &diag);
  for (const Problem& p : diag.problems()) check_message(p.text());
}

std::vector<std::string> lines_of(const std::string& text, size_t most) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size() && lines.size() < most) {
    const size_t end = std::min(text.find('\n', start), text.size());
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// Mode 8: --vary, --shard and --variant arguments as sweep and compare parse them.
void fuzz_command_line(const std::string& text) {
  std::vector<SweepAxis> varies;
  Shard shard;
  for (const std::string& line : lines_of(text, 8)) {
    try {
      if (line.rfind("shard ", 0) == 0) {
        shard = parse_shard(line.substr(6));
        if (shard.count < 1 || shard.index < 0 || shard.index >= shard.count) fail("bad shard");
      } else if (line.rfind("variant ", 0) == 0) {
        parse_variant(line.substr(8));
      } else {
        varies.push_back(parse_vary(line));
        if (varies.back().values.empty()) fail("an axis without values");
      }
    } catch (const ConfigError& e) {
      check_message(e.what());
    }
  }
  try {
    const std::vector<SweepAxis> axes = combine_axes({}, varies);
    const long long count = count_points(axes);
    std::vector<SweepPoint> points;
    try {
      points = expand_points(axes);
    } catch (const ConfigError& e) {
      check_message(e.what());
      if (count <= kMaxSweepPoints) fail("points refused below the limit");
      return;
    }
    if (static_cast<long long>(points.size()) != count) fail("point count");
    const std::vector<SweepPoint> mine = select_shard(points, shard);
    if (mine.size() > points.size()) fail("shard larger than the sweep");
    if (!points.empty()) {
      const std::vector<std::string> sets = point_overrides(axes, points.front());
      if (sets.size() != axes.size()) fail("overrides per point");
      load_both_ways(g_dir + "/good.yaml", sets);
    }
  } catch (const ConfigError& e) {
    check_message(e.what());
  }
}

// Mode 9: what merge reads: the text as a sweep CSV file and as a manifest.
void fuzz_merge_inputs(const std::string& text) {
  try {
    const SweepFileContent content = parse_sweep_file(text, "fuzz.csv");
    if (content.complete_bytes > text.size()) fail("complete_bytes past the end");
    std::string again = content.header;
    for (const SweepFileContent::Row& row : content.rows) {
      again += row.line;
      if (row.fields.empty() || row.index < 0) fail("a row without its index");
    }
    if (again != text.substr(0, content.complete_bytes)) fail("rows do not rebuild the file");
    if (content.torn != (content.complete_bytes < text.size())) fail("torn flag");
  } catch (const ConfigError& e) {
    check_message(e.what());
  }
  try {
    const SweepManifest m = parse_manifest(text, "fuzz.csv.manifest");
    const SweepManifest back = parse_manifest(manifest_json(m), "round trip");
    if (back.fingerprint() != m.fingerprint() || back.shard_count != m.shard_count) {
      fail("manifest round trip");
    }
    if (!manifest_differences(m, back).empty()) fail("a manifest differs from itself");
  } catch (const ConfigError& e) {
    check_message(e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char templ[] = "/tmp/trident_fuzz_XXXXXX";
  if (::mkdtemp(templ) == nullptr) std::abort();
  g_dir = templ;
  // The good files around the fuzzed one, written once.
  write("cluster.yaml", kCluster);
  write("gpu.yaml", kGpu);
  write("model.yaml", kModel);
  write("plan.yaml", kPlan);
  write("config.json", kHfConfig);
  write("cluster-fuzz-gpu.yaml",
        std::string(kCluster).replace(std::string(kCluster).find("gpu.yaml"), 8, "fuzz-gpu.yaml"));
  write("good.yaml", "cluster: cluster.yaml\nmodel: model.yaml\nplan: plan.yaml\n");
  write("scenario-fuzz-plan.yaml", "cluster: cluster.yaml\nmodel: model.yaml\nplan: fuzz.yaml\n");
  write("scenario-fuzz-cluster.yaml", "cluster: fuzz.yaml\nmodel: model.yaml\nplan: plan.yaml\n");
  write("scenario-fuzz-model.yaml", "cluster: cluster.yaml\nmodel: fuzz.yaml\nplan: plan.yaml\n");
  write("scenario-fuzz-hf.yaml", "cluster: cluster.yaml\nmodel: hf:fuzz.json\nplan: plan.yaml\n");
  write("scenario-fuzz-gpu.yaml",
        "cluster: cluster-fuzz-gpu.yaml\nmodel: model.yaml\nplan: plan.yaml\n");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const int mode = data[0] % 10;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto path = [](const char* name) { return g_dir + "/" + name; };
  // Nothing of an earlier input may leak into this one.
  for (const char* name : {"scenario.yaml", "fuzz.yaml", "fuzz.json", "fuzz-gpu.yaml"}) {
    ::unlink(path(name).c_str());
  }
  switch (mode) {
    case 0:
      write("scenario.yaml", text);
      load_both_ways(path("scenario.yaml"), {});
      check_alone(path("scenario.yaml"));
      return 0;
    case 1:
    case 2:
    case 3:
    case 4:
    case 5: {
      // The fuzzed plan, cluster, model, config.json or GPU file of a good scenario.
      static const char* const kScenarios[] = {"",
                                               "scenario-fuzz-plan.yaml",
                                               "scenario-fuzz-cluster.yaml",
                                               "scenario-fuzz-model.yaml",
                                               "scenario-fuzz-hf.yaml",
                                               "scenario-fuzz-gpu.yaml"};
      const char* file = mode == 4 ? "fuzz.json" : mode == 5 ? "fuzz-gpu.yaml" : "fuzz.yaml";
      write(file, text);
      load_both_ways(path(kScenarios[mode]), {});
      check_alone(path(file));
      return 0;
    }
    case 6: {
      std::vector<std::string> overrides;
      size_t start = 0;
      while (start <= text.size() && overrides.size() < 16) {
        const size_t end = std::min(text.find('\n', start), text.size());
        overrides.push_back(text.substr(start, end - start));
        start = end + 1;
      }
      load_both_ways(path("good.yaml"), overrides);
      return 0;
    }
    case 8:
      fuzz_command_line(text);
      return 0;
    case 9:
      fuzz_merge_inputs(text);
      return 0;
    default:
      for (auto parse : {&parse_yaml, &parse_json}) {
        try {
          parse(text, "fuzz", nullptr);
        } catch (const ConfigError& e) {
          check_message(e.what());
        }
        Diagnostics diag;
        try {
          parse(text, "fuzz", &diag);
        } catch (const ConfigError& e) {
          check_message(e.what());
        }
      }
      return 0;
  }
}
