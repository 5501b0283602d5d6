// Fast against full fidelity (schedule/shortcuts.h) on seeded random scenarios: small dense
// and MoE models on one or two nodes, each draw choosing every plan dimension (t, cp, p, d,
// EP, ETP, dispatcher, virtual stages, schedule, micro-batches, recompute, sequence
// parallelism, tp_comm_overlap, sharding strategy, overlap_grad_reduce, overlap_param_gather,
// grad_reduce_in_bf16, bucket size, placement). The step times must agree within 1 %; the
// test prints the draw count, the worst gap and how often each shortcut was taken.
#include <catch2/catch.hpp>
#include <cmath>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "config/scenario.h"
#include "core/errors.h"
#include "schedule/shortcuts.h"
#include "sim_report.h"

using namespace trident;
using namespace trident::testing;

namespace {

struct Draw {
  std::string text;   // the scenario
  int nodes = 1;
  std::string label;  // one line: the plan
};

// Picks one of `values`.
template <typename T>
const T& pick(std::mt19937& rng, const std::vector<T>& values) {
  return values[rng() % values.size()];
}

bool coin(std::mt19937& rng) { return rng() % 2 == 0; }

// A random scenario; it may be invalid (the caller loads it and draws again when refused).
Draw draw(std::mt19937& rng) {
  const bool h100 = coin(rng);
  const int nodes = pick<int>(rng, {1, 2});
  const int island = h100 ? 8 : 4;
  const int gpus = nodes * island;
  const bool moe = rng() % 4 == 0;
  const int layers = pick<int>(rng, {4, 8});
  const int hidden = pick<int>(rng, {512, 1024});
  const int seq = pick<int>(rng, {1024, 2048});
  const int t = pick<int>(rng, {1, 2, 4});
  const int cp = pick<int>(rng, {1, 1, 2});
  const int p = pick<int>(rng, {1, 2, 4});
  const int v = p > 1 ? pick<int>(rng, {1, 2}) : 1;
  const int d = gpus / (t * cp * p);
  const int m = pick<int>(rng, {1, 2, 4, 8});
  std::string model = "model:\n  name: draw\n  num_layers: " + std::to_string(layers) +
                      "\n  hidden_size: " + std::to_string(hidden) +
                      "\n  num_attention_heads: 8\n  seq_length: " + std::to_string(seq) +
                      "\n  vocab_size: 32000\n  swiglu: true\n  normalization: RMSNorm\n"
                      "  position_embedding: rope\n  untie_embeddings_and_output_weights: true\n";
  if (moe) {
    model += "  num_experts: " + std::to_string(pick<int>(rng, {4, 8})) +
             "\n  moe_router_topk: 2\n  moe_ffn_hidden_size: " + std::to_string(hidden) + "\n";
  }
  std::string plan = "plan:\n  tensor_parallel: " + std::to_string(t) +
                     "\n  context_parallel: " + std::to_string(cp) +
                     "\n  pipeline_parallel: " + std::to_string(p) +
                     "\n  data_parallel: " + std::to_string(std::max(d, 1)) +
                     "\n  micro_batch_size: " + std::to_string(pick<int>(rng, {1, 2})) +
                     "\n  num_microbatches: " + std::to_string(m) + "\n";
  std::string label = (h100 ? "dgx-h100 x" : "tiny-2node x") + std::to_string(nodes) +
                      (moe ? " moe" : " dense") + " L" + std::to_string(layers) + " h" +
                      std::to_string(hidden) + " s" + std::to_string(seq) + " t" +
                      std::to_string(t) + " cp" + std::to_string(cp) + " p" + std::to_string(p) +
                      " d" + std::to_string(d) + " m" + std::to_string(m);
  const auto set = [&](const std::string& key, const std::string& value) {
    plan += "  " + key + ": " + value + "\n";
    label += " " + key + "=" + value;
  };
  if (v > 1) {
    set("virtual_stages", std::to_string(v));
  } else if (p > 1 && coin(rng)) {
    set("schedule", "gpipe");
  }
  set("recompute", pick<std::string>(rng, {"none", "selective", "full"}));
  if (t > 1 && coin(rng)) {
    set("sequence_parallel", "true");
    if (coin(rng)) set("tp_comm_overlap", "true");
  }
  const std::string sharding =
      pick<std::string>(rng, {"no_shard", "optim", "optim", "optim_grads", "optim_grads_params"});
  set("data_parallel_sharding_strategy", sharding);
  if (coin(rng)) set("overlap_grad_reduce", "true");
  if (sharding != "no_shard" && coin(rng)) set("overlap_param_gather", "true");
  if (coin(rng)) set("grad_reduce_in_bf16", "true");
  if (coin(rng)) set("grad_bucket_size", pick<std::string>(rng, {"2000000", "8000000"}));
  if (coin(rng)) {
    set("placement", pick<std::string>(rng, {"[tensor, data, context, pipeline]",
                                             "[tensor, pipeline, context, data]",
                                             "[data, tensor, context, pipeline]"}));
  }
  if (moe) {
    set("expert_model_parallel_size", std::to_string(pick<int>(rng, {1, 2, 4})));
    set("moe_token_dispatcher_type", pick<std::string>(rng, {"allgather", "alltoall"}));
    if (t > 1 && coin(rng)) set("expert_tensor_parallel_size", "1");
  }
  const std::string cluster = std::string("cluster: ") + (h100 ? "dgx-h100" : "tiny-2node") +
                              "\n";
  return {cluster + model + plan, nodes, label};
}

}  // namespace

TEST_CASE("fast and full fidelity agree within 1 % on random plans", "[engine][fidelity][property]") {
  constexpr int kDraws = 240;
  std::mt19937 rng(20261203);
  int simulated = 0, refused = 0;
  double worst = 0;
  std::string worst_label;
  std::map<std::string, int> taken;  // shortcut name -> draws that took it
  while (simulated < kDraws) {
    const Draw dr = draw(rng);
    Scenario sc;
    try {
      sc = load_scenario_text(dr.text, "draw", {"cluster.nodes=" + std::to_string(dr.nodes)});
    } catch (const ConfigError&) {
      ++refused;
      continue;
    }
    if (!simulation_activity_issues(sc, Fidelity::kFull).empty()) {
      ++refused;
      continue;
    }
    // The shortcut record: which shortcuts the fast step of this draw takes.
    const Shortcuts shortcuts = decide_shortcuts(sc, Fidelity::kFast);
    std::string took;
    for (const auto& [name, s] : named_shortcuts(shortcuts)) {
      if (!s->taken) continue;
      taken[name] += 1;
      took += std::string(took.empty() ? "" : " ") + name;
    }
    const Report fast = simulate_report(sc, Fidelity::kFast);
    const Report full = simulate_report(sc, Fidelity::kFull);
    const double gap = std::abs(fast.step_time_s - full.step_time_s) / full.step_time_s;
    if (gap > worst) {
      worst = gap;
      worst_label = dr.label + " [" + took + "]";
    }
    ++simulated;
    CAPTURE(simulated, dr.label, took, fast.step_time_s, full.step_time_s);
    CHECK(gap <= 0.01);
  }
  std::cout << "fidelity property: " << simulated << " draws (" << refused
            << " refused at load), worst fast/full step gap " << 100 * worst << " % ("
            << worst_label << ")\nshortcuts taken:";
  for (const auto& [name, n] : taken) std::cout << " " << name << " " << n;
  std::cout << "\n";
  // Every shortcut that small plans can take was taken by some draw.
  for (const char* name : {"group_actor", "fused_tp", "one_rank_flows", "one_replica",
                           "collapsed_steps", "claimed_runs"}) {
    CAPTURE(name);
    CHECK(taken[name] > 0);
  }
}
