// Local attention (workload/local_attention.h, docs/attention.md): sliding windows (gpt-oss,
// Megatron --window-size / --window-attn-skip-freq) and chunked attention (Llama 4): the
// exact pair counts, the per-layer pattern, the kernels' FLOPs, windows and chunks as long as
// the sequence equal to plain causal attention, context parallelism, and the imports.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config/megatron_args.h"
#include "config_support.h"
#include "workload/layer_ops.h"
#include "workload/local_attention.h"
#include "workload/moe_model.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

// The gpt-oss-20b model on one DGX H100 node: t = 1, p = 1, d = 8, EP 8; then `more`.
Scenario oss(std::vector<std::string> more = {}) {
  std::vector<std::string> sets = {"cluster.nodes=1", "plan.pipeline_parallel=1",
                                   "plan.data_parallel=8", "plan.global_batch_size=16",
                                   "model.num_layers=4"};
  sets.insert(sets.end(), more.begin(), more.end());
  const std::string path = write_temp(
      "oss.yaml", "cluster: dgx-h100\nmodel: " + repo("configs/models/gpt-oss-20b.yaml") + R"(
plan:
  tensor_parallel: 1
  pipeline_parallel: 1
  data_parallel: 8
  expert_model_parallel_size: 8
  micro_batch_size: 1
  global_batch_size: 16
  precision: bf16
)");
  return load_scenario(path, sets);
}

// The message of the ConfigError loading the model file `path` throws.
std::string model_error(const std::string& path) {
  try {
    load_model_file(path);
  } catch (const ConfigError& e) {
    return e.what();
  }
  FAIL("no ConfigError for " << path);
  return "";
}

// Sums every pass's compute and model FLOPs of `w` (one micro-batch, all stages).
struct Totals {
  double compute_s = 0, model_flops = 0, flops = 0;
};
Totals totals(const Workload& w) {
  Totals t;
  for (const StageWork& st : w.stages) {
    for (const ChunkWork& ch : st.chunks) {
      for (const Pass* p : {&ch.forward, &ch.backward}) {
        t.compute_s += p->compute_s;
        t.model_flops += p->model_flops;
        t.flops += p->flops;
      }
    }
  }
  return t;
}

// The forward attention kernel of `ops`.
const Op& attention(const std::vector<Op>& ops) {
  for (const Op& op : ops) {
    if (op.kind == OpKind::kAttention) return op;
  }
  FAIL("no attention kernel");
  return ops.front();
}

}  // namespace

TEST_CASE("local pairs are the exact counts of the window's and the chunks' masks",
          "[attention-window]") {
  for (int s : {1, 7, 128, 300}) {
    for (int w : {1, 5, 128, 299, 1000}) {
      double window = 0, chunk = 0;
      for (int i = 0; i < s; ++i) {
        window += std::min(i + 1, w);
        chunk += i % w + 1;
      }
      CHECK(local_pairs(0, s, w, 0) == window);
      CHECK(local_pairs(0, s, 0, w) == chunk);
      // A slice of queries: the difference of two prefixes.
      double tail = 0;
      for (int i = s / 2; i < s; ++i) tail += std::min(i + 1, w);
      CHECK(local_pairs(s / 2, s - s / 2, w, 0) == tail);
    }
  }
  CHECK(local_pairs(0, 4096, 0, 0) == 4096.0 * 4097 / 2);
}

TEST_CASE("window_attn_skip_freq and no_rope_freq pick layers as Megatron-Core does",
          "[attention-window]") {
  const ModelSpec m = load_model_file(repo("configs/models/gpt-oss-120b.yaml"));
  REQUIRE(m.window_left == 128);
  // is_layer_window_attention: layer number n (from 1) is full when n % 2 == 0.
  for (int l = 0; l < m.num_layers; ++l) {
    INFO(l);
    CHECK(m.layer_window(l) == (l % 2 == 0 ? 129 : 0));
    CHECK(m.layer_rope(l));
    CHECK(m.layer_chunk(l) == 0);
  }
  const ModelSpec scout = load_model_file(repo("configs/models/llama4-scout.yaml"));
  for (int l = 0; l < scout.num_layers; ++l) {
    INFO(l);
    const bool nope = (l + 1) % 4 == 0;  // layers 4, 8, ... from 1
    CHECK(scout.layer_rope(l) == !nope);
    CHECK(scout.layer_chunk(l) == (nope ? 0 : 8192));
    CHECK(scout.layer_window(l) == 0);
  }
  // A list gives 1 for each window layer; without window_size the pattern is refused.
  const Scenario listed = oss({"model.window_attn_skip_freq=[1, 1, 1, 0]"});
  CHECK(listed.model.layer_window(2) == 129);
  CHECK(listed.model.layer_window(3) == 0);
  CHECK_THAT(model_error(write_temp("m.yaml",
                                    "name: x\nnum_layers: 2\nhidden_size: 64\n"
                                    "num_attention_heads: 4\nseq_length: 64\n"
                                    "vocab_size: 100\nwindow_attn_skip_freq: 2\n")),
             Catch::Contains("window_attn_skip_freq without window_size"));
  CHECK_THAT(model_error(write_temp("m.yaml",
                                    "name: x\nnum_layers: 2\nhidden_size: 64\n"
                                    "num_attention_heads: 4\nseq_length: 64\n"
                                    "vocab_size: 100\nwindow_size: [-2, 0]\n")),
             Catch::Contains("window_size") && Catch::Contains("not a window extent"));
  CHECK_THAT(model_error(write_temp("m.yaml",
                                    "name: x\nnum_layers: 6\nhidden_size: 64\n"
                                    "num_attention_heads: 4\nseq_length: 64\n"
                                    "vocab_size: 100\nposition_embedding: rope\n"
                                    "no_rope_freq: 4\n")),
             Catch::Contains("no_rope_freq 4 does not divide num_layers 6"));
}

TEST_CASE("a window layer's attention FLOPs are its exact pairs times 4 h d",
          "[attention-window]") {
  const Scenario sc = oss();
  LayerDims d = make_layer_dims(sc.model, sc.plan, GpuArchitecture::kHopper);
  apply_layer_attention(sc.model, 0, &d);
  REQUIRE(d.window == 129);
  const Op fwd = attention(layer_forward_ops(d, true));
  double pairs = 0;
  for (int i = 0; i < sc.model.seq_length; ++i) pairs += std::min(i + 1, 129);
  CHECK(fwd.flops() == 4 * pairs * 64 * 64);  // b 1, 64 heads of 64
  CHECK(fwd.model_flops() == fwd.flops());
  CHECK(attention(layer_backward_ops(d, true)).model_flops() == 2 * fwd.flops());
  // The full layer next to it: the causal s^2 / 2.
  LayerDims full = make_layer_dims(sc.model, sc.plan, GpuArchitecture::kHopper);
  apply_layer_attention(sc.model, 1, &full);
  CHECK(full.window == 0);
  CHECK(attention(layer_forward_ops(full, true)).flops() == 4 * 4096.0 * 4096 / 2 * 64 * 64);
  // The unfused backend runs the whole score matrix; its model FLOPs count the window.
  Scenario unfused = sc;
  unfused.plan.attention_backend = AttentionBackend::kUnfused;
  LayerDims u = make_layer_dims(unfused.model, unfused.plan, GpuArchitecture::kHopper);
  apply_layer_attention(unfused.model, 0, &u);
  for (const Op& op : layer_forward_ops(u, true)) {
    if (op.name == "attn_scores") CHECK(op.model_flops() == Approx(2 * pairs * 64 * 64));
  }
}

TEST_CASE("a window or chunk as long as the sequence is plain causal attention, byte for byte",
          "[attention-window]") {
  const Workload plain = build_workload(oss({"model.window_size=[-1, 0]"}));
  // 4096 keys already see the whole prefix (window 4096 - 1 + 1 = the sequence).
  const Workload wide = build_workload(oss({"model.window_size=[4095, 0]"}));
  const Workload chunked =
      build_workload(oss({"model.window_size=[-1, 0]", "model.attention_chunk_size=4096"}));
  for (const Workload* w : {&wide, &chunked}) {
    const Totals a = totals(plain), b = totals(*w);
    CHECK(a.compute_s == b.compute_s);
    CHECK(a.model_flops == b.model_flops);
    CHECK(a.flops == b.flops);
    CHECK(plain.model_flops_per_step == w->model_flops_per_step);
  }
  // One key fewer is a window of the exact count s (s + 1) / 2 - 1, which the plain causal
  // convention (Megatron's s^2 / 2) undercounts by s / 2 (docs/attention.md).
  const Scenario narrow = oss({"model.window_size=[4094, 0]"});
  LayerDims d = make_layer_dims(narrow.model, narrow.plan, GpuArchitecture::kHopper);
  apply_layer_attention(narrow.model, 0, &d);
  CHECK(attention(layer_forward_ops(d, true)).attention.pairs == 4096.0 * 4097 / 2 - 1);
  const Workload half = build_workload(oss({"model.window_size=[2047, 0]"}));
  CHECK(totals(half).model_flops < totals(plain).model_flops);
}

TEST_CASE("window and full layers flow through the stages: the window stage is cheaper",
          "[attention-window]") {
  // Stage 0 holds two window layers, stage 1 two full ones; everything else is equal.
  const Scenario sc = oss({"plan.pipeline_parallel=2", "plan.data_parallel=4",
                           "model.window_attn_skip_freq=[1, 1, 0, 0]", "model.seq_length=32768",
                           "plan.expert_model_parallel_size=4"});
  const Workload w = build_workload(sc);
  REQUIRE(w.stages.size() == 2);
  const Pass& f0 = w.stages[0].chunks[0].forward;
  const Pass& f1 = w.stages[1].chunks[0].forward;
  // Stage 1 adds the output layer; its attention alone outweighs it at 32k tokens.
  const double attn0 = f0.classes[OpClass::kAttention].seconds;
  const double attn1 = f1.classes[OpClass::kAttention].seconds;
  CHECK(attn0 < attn1 / 20);
  // Model FLOPs: the two passes' attention differ by exactly the pairs the window drops.
  const double heads_dims = 4.0 * 64 * 64;
  const double full = 32768.0 * 32768 / 2, window = local_pairs(0, 32768, 129, 0);
  const Workload all_full = build_workload(
      oss({"plan.pipeline_parallel=2", "plan.data_parallel=4", "model.window_size=[-1, 0]",
           "model.seq_length=32768", "plan.expert_model_parallel_size=4"}));
  const double saved = all_full.stages[0].chunks[0].forward.model_flops - f0.model_flops;
  CHECK(saved == Approx(2 * heads_dims * (full - window)).epsilon(1e-12));
}

TEST_CASE("context parallelism: all_gather and a2a run the window; p2p is refused as TE does",
          "[attention-window]") {
  const std::string p2p = write_temp(
      "cp.yaml", "cluster: dgx-h100\nmodel: " + repo("configs/models/gpt-oss-20b.yaml") + R"(
overrides:
  cluster.nodes: 1
plan:
  tensor_parallel: 1
  context_parallel: 2
  pipeline_parallel: 1
  data_parallel: 4
  expert_model_parallel_size: 8
  micro_batch_size: 1
  global_batch_size: 8
  precision: bf16
)");
  CHECK_THAT(load_error(p2p), Catch::Contains("context_parallel 2 with sliding-window attention "
                                              "under cp_comm_type p2p") &&
                                  Catch::Contains("expected cp_comm_type all_gather or a2a"));
  const Scenario ag = load_scenario(p2p, {"plan.cp_comm_type=all_gather"});
  LayerDims d = make_layer_dims(ag.model, ag.plan, GpuArchitecture::kHopper);
  apply_layer_attention(ag.model, 0, &d);
  // Rank 0 holds chunks 0 and 3 of 1024 tokens: its chunk 0 starts the sequence, so rank 1
  // (chunks 1 and 2, every query with 129 keys) is the busiest.
  const Op a = attention(layer_forward_ops(d, true));
  CHECK(a.attention.pairs == 2048.0 * 129);
  CHECK(a.flops() == 4 * 2048.0 * 129 * 64 * 64);
  const Scenario a2a = load_scenario(p2p, {"plan.cp_comm_type=a2a"});
  LayerDims e = make_layer_dims(a2a.model, a2a.plan, GpuArchitecture::kHopper);
  apply_layer_attention(a2a.model, 0, &e);
  const Op b = attention(layer_forward_ops(e, true));
  CHECK(b.attention.s == 4096);
  CHECK(b.attention.pairs == local_pairs(0, 4096, 129, 0));
}

TEST_CASE("long context: a 128k-token step of window layers is far cheaper than full ones",
          "[attention-window]") {
  const std::vector<std::string> at128k = {"model.seq_length=131072", "plan.cp_comm_type=a2a",
                                           "plan.context_parallel=8", "plan.data_parallel=1",
                                           "plan.global_batch_size=1"};
  std::vector<std::string> full = at128k;
  full.push_back("model.window_attn_skip_freq=[0, 0, 0, 0]");
  std::vector<std::string> window = at128k;
  window.push_back("model.window_attn_skip_freq=[1, 1, 1, 1]");
  const Workload fw = build_workload(oss(full)), ww = build_workload(oss(window));
  const Totals f = totals(fw), w = totals(ww);
  double f_attn = 0, w_attn = 0;
  for (const Workload* x : {&fw, &ww}) {
    for (const ChunkWork& ch : x->stages[0].chunks) {
      for (const Pass* p : {&ch.forward, &ch.backward}) {
        (x == &fw ? f_attn : w_attn) += p->classes[OpClass::kAttention].seconds;
      }
    }
  }
  // The window layers' attention kernels are over 100x cheaper; with four layers and the
  // output layer the whole pass over 3x (docs/attention.md: 5.8x for gpt-oss-120b's step).
  CHECK(w_attn * 100 < f_attn);
  CHECK(w.compute_s * 3 < f.compute_s);
  CHECK(w.model_flops < f.model_flops);
}

TEST_CASE("gpt-oss and Llama 4 config.json files import their attention",
          "[attention-window][hf]") {
  const ModelSpec oss = check_config_file(repo("tests/data/hf/gpt-oss-120b/config.json"),
                                          {"model.seq_length=4096"}, nullptr)
                            .specs.model;
  const ModelSpec shipped = load_model_file(repo("configs/models/gpt-oss-120b.yaml"));
  CHECK(oss.window_left == 128);
  CHECK(oss.window_layer_pattern == shipped.window_layer_pattern);
  CHECK(oss.num_experts == 128);
  CHECK(oss.moe_router_topk == 4);
  CHECK(oss.head_dim() == 64);
  CHECK(oss.linear_biases());
  CHECK(model_params(oss) == model_params(shipped));
  CHECK(active_params(oss) == active_params(shipped));
  const ModelSpec scout = check_config_file(repo("tests/data/hf/Llama-4-Scout-17B-16E/config.json"),
                                            {"model.seq_length=8192"}, nullptr)
                              .specs.model;
  const ModelSpec scout_yaml = load_model_file(repo("configs/models/llama4-scout.yaml"));
  CHECK(scout.attention_chunk_size == 8192);
  CHECK(scout.no_rope_pattern == scout_yaml.no_rope_pattern);
  CHECK(model_params(scout) == model_params(scout_yaml));
  CHECK(active_params(scout) == active_params(scout_yaml));
}

TEST_CASE("the Megatron line --window-size 128,0 --window-attn-skip-freq 2 imports",
          "[attention-window][megatron]") {
  const MegatronScenario t = translate_megatron_args(
      "--num-layers 4 --hidden-size 2880 --num-attention-heads 64 --kv-channels 64 "
      "--group-query-attention --num-query-groups 8 --seq-length 4096 --vocab-size 201088 "
      "--micro-batch-size 1 --global-batch-size 8 --bf16 --swiglu --ffn-hidden-size 2880 "
      "--use-rotary-position-embeddings --window-size 128,0 --window-attn-skip-freq 2 "
      "--no-rope-freq 4",
      "line.sh", "dgx-h100");
  CHECK_THAT(t.yaml, Catch::Contains("window_size: [128, 0]"));
  const Scenario sc = load_scenario(write_temp("line.yaml", t.yaml), {"cluster.nodes=1"});
  CHECK(sc.model.layer_window(0) == 129);
  CHECK(sc.model.layer_window(1) == 0);
  CHECK(sc.model.layer_window(2) == 129);
  CHECK(!sc.model.layer_rope(3));
  CHECK(sc.model.layer_rope(2));
}
