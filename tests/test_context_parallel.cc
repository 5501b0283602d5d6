// Context parallelism without an engine: the 4-D rank generator (layout/rank_map), the p2p
// ring attention ops (workload/layer_ops), per-rank FLOPs, memory and sharding
// (workload/stage_work), the plan's checks and the Megatron launch-line import.
#include <catch2/catch.hpp>

#include "config/checks.h"
#include "config/megatron_args.h"
#include "layout/rank_map.h"
#include "test_support.h"
#include "workload/cp_attention.h"
#include "workload/layer_ops.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

// Llama-3-70B-like: 64 heads, 8 key/value groups, SwiGLU; hidden 8192.
ModelSpec llama_model(int layers, int seq) {
  ModelSpec m = gpt_model(layers, 8192, 64, seq, 128256);
  m.num_query_groups = 8;
  m.ffn_hidden_size = 28672;
  m.swiglu = true;
  m.rms_norm = true;
  m.attention_dropout = 0;
  m.hidden_dropout = 0;
  return m;
}

ClusterSpec hopper_cluster(int nodes) {
  ClusterSpec c = a100_cluster(nodes);
  c.gpu.architecture = GpuArchitecture::kHopper;  // fused attention
  return c;
}

PlanSpec cp_plan(int t, int cp, int p, int d, int m) {
  PlanSpec pl = plan(t, p, d, 1, m, ScheduleKind::k1F1B);
  pl.context = cp;
  return pl;
}

double ops_flops(const std::vector<Op>& ops, bool model) {
  double f = 0;
  for (const Op& op : ops) f += model ? op.model_flops() : op.flops();
  return f;
}

}  // namespace

TEST_CASE("ranks follow Megatron's tp-cp-dp-pp order with context as a 4th dimension",
          "[schedule][context]") {
  const ClusterSpec c = a100_cluster(2);
  const PlanSpec pl = cp_plan(2, 2, 2, 2, 1);
  const RankMap r(pl, c);
  // Default placement [tensor, context, data, pipeline]: rank = tp + 2 cp + 4 dp + 8 pp.
  for (int pp = 0; pp < 2; ++pp)
    for (int dp = 0; dp < 2; ++dp)
      for (int cp = 0; cp < 2; ++cp)
        for (int tp = 0; tp < 2; ++tp)
          CHECK(r.gpu(tp, cp, dp, pp) == tp + 2 * cp + 4 * dp + 8 * pp);
  CHECK(r.tensor_group(1, 1, 0) == std::vector<int>{6, 7});
  CHECK(r.context_group(1, 0, 1) == std::vector<int>{9, 11});
  // The data-parallel group with context parallelism: d x cp ranks (Megatron's dp-cp group).
  CHECK(r.data_group(0, 0) == std::vector<int>{0, 2, 4, 6});
  CHECK(r.data_group(1, 1) == std::vector<int>{9, 11, 13, 15});
  CHECK(r.groups({ParallelDim::kContext}).size() == 8);

  // A placement without context keeps it right after tensor.
  PlanSpec three = pl;
  three.placement = {ParallelDim::kData, ParallelDim::kTensor, ParallelDim::kPipeline};
  CHECK(full_placement(three.placement) ==
        std::vector<ParallelDim>{ParallelDim::kData, ParallelDim::kTensor, ParallelDim::kContext,
                                 ParallelDim::kPipeline});
  const RankMap r3(three, c);
  CHECK(r3.gpu(1, 1, 1, 0) == 1 + 2 * 1 + 4 * 1);  // dp stride 1, tp 2, cp 4, pp 8
  CHECK(r3.context_group(0, 1, 0) == std::vector<int>{1, 5});
  // Context outermost: CP ranks in different nodes.
  PlanSpec outer = pl;
  outer.placement = {ParallelDim::kTensor, ParallelDim::kData, ParallelDim::kPipeline,
                     ParallelDim::kContext};
  const RankMap ro(outer, c);
  CHECK(ro.context_group(0, 0, 0) == std::vector<int>{0, 8});
  CHECK(ro.data_groups_one_per_island() == false);
}

TEST_CASE("the p2p ring runs each rank's 1/cp of the causal attention in cp blocks",
          "[workload][context]") {
  for (int cp : {2, 4, 8}) {
    PlanSpec pl = cp_plan(8, cp, 1, 1, 1);
    const ModelSpec m = llama_model(1, 32768);
    const LayerDims d = make_layer_dims(m, pl, GpuArchitecture::kHopper);
    CHECK(d.s == 32768.0 / cp);
    const AttentionShape whole{1, 64.0 / 8, 1, 32768, 128, true};
    for (bool bwd : {false, true}) {
      const std::vector<Op> ops = ring_attention_ops(d, bwd);
      int blocks = 0, transfers = 0;
      double bytes = 0;
      for (const Op& op : ops) {
        blocks += op.kind == OpKind::kAttention;
        transfers += op.kind == OpKind::kCpTransfer;
        bytes += op.kind == OpKind::kCpTransfer ? op.bytes : 0;
      }
      INFO("cp " << cp << (bwd ? " backward" : " forward"));
      CHECK(blocks == cp);
      // Forward: cp - 1 K/V blocks arrive. Backward: as many, and cp dK/dV hops (the last one
      // home after the last block), sharing a step from block 1 to cp - 2.
      CHECK(transfers == (bwd ? cp + 1 : cp - 1));
      const double kv = 2.0 * (32768.0 / cp) * 1 * 128 * 2;  // K and V, one group per TP rank
      CHECK(cp_kv_bytes(d) == kv);
      CHECK(bytes == (bwd ? (2 * cp - 1) * kv : (cp - 1) * kv));
      // Causal load balance: every rank runs exactly 1/cp of the masked work, and Megatron's
      // model FLOPs of the whole attention split cp ways.
      CHECK(ops_flops(ops, false) == Approx(whole.flops(bwd) / cp).epsilon(1e-12));
      CHECK(ops_flops(ops, true) == Approx(whole.model_flops(bwd) / cp).epsilon(1e-12));
    }
  }
}

TEST_CASE("context parallelism keeps the model FLOPs of a step and divides per-rank work",
          "[workload][context]") {
  // The same 8 sequences per step: d = 4 without CP, or d = 2 replicas of cp = 2.
  Scenario base = scenario(hopper_cluster(8), llama_model(4, 16384), cp_plan(8, 1, 1, 4, 2));
  Scenario cp = scenario(hopper_cluster(8), llama_model(4, 16384), cp_plan(8, 2, 1, 2, 4));
  base.plan.global_batch_size = cp.plan.global_batch_size = 8;
  const Workload w1 = build_workload(base), w2 = build_workload(cp);
  CHECK(w2.model_flops_per_step == Approx(w1.model_flops_per_step).epsilon(1e-12));
  // Per rank and micro-batch: the linear GEMMs run on s / cp tokens.
  const LayerDims d1 = make_layer_dims(base.model, base.plan, GpuArchitecture::kHopper);
  const LayerDims d2 = make_layer_dims(cp.model, cp.plan, GpuArchitecture::kHopper);
  double g1 = 0, g2 = 0;
  for (const Op& op : layer_forward_ops(d1)) g1 += op.linear ? op.flops() : 0;
  for (const Op& op : layer_forward_ops(d2)) g2 += op.linear ? op.flops() : 0;
  CHECK(g2 == Approx(g1 / 2).epsilon(1e-12));
  // Pipeline messages carry the rank's s / cp tokens.
  CHECK(w2.stages[0].p2p_bytes == Approx(w1.stages[0].p2p_bytes / 2).epsilon(1e-12));
  // Each pass holds the ring: blocks 0 .. cp-1 in one segment, forward and backward.
  const Pass& fwd = w2.stages[0].chunks[0].forward;
  CHECK(fwd.ring_steps == 4 * 1);  // 4 layers, cp - 1 = 1 transfer each
  CHECK(w2.stages[0].chunks[0].backward.ring_steps == 4 * 3);
}

TEST_CASE("context parallel memory: activations / cp, ring buffers, dp-cp sharding",
          "[workload][memory][context]") {
  const int seq = 32768;
  for (int cp : {1, 2, 4}) {
    Scenario sc = scenario(hopper_cluster(16), llama_model(8, seq), cp_plan(8, cp, 2, 2, 4));
    sc.plan.sequence_parallel = true;
    sc.plan.distributed_optimizer = true;
    const Workload w = build_workload(sc);
    // Exactly the activations of a seq / cp sequence without CP.
    Scenario shorter = sc;
    shorter.model.seq_length = seq / cp;
    shorter.plan.context = 1;
    INFO("cp " << cp);
    CHECK(layer_activation_bytes(sc.model, sc.plan, GpuArchitecture::kHopper) ==
          layer_activation_bytes(shorter.model, shorter.plan, GpuArchitecture::kHopper));
    // Korthikanti with SP and fused attention: s b h (34 - 4 (1 - g/a) - 2 masks ... ) / t +
    // 4 a s b / t; Llama: no dropout masks, g/a = 1/8.
    const double s = double(seq) / cp, h = 8192, t = 8;
    // The SwiGLU MLP keeps (2g + 2) f / h = 6 x 3.5 = 21 (docs/memory.md, D3).
    const double sharded = 8 - 4 * (1 - 1.0 / 8) + 21, replicated = 8;
    CHECK(layer_activation_bytes(sc.model, sc.plan, GpuArchitecture::kHopper) ==
          Approx(s * h * ((sharded + replicated) / t + 4 * 64 / (h * t))).epsilon(1e-12));
    // Ring buffers: every step's K/V block (one 128-wide group per rank), output (8 heads of
    // 128) and fp32 LSE, held until the output correction after the ring.
    const double kv = 2 * s * 1 * 128 * 2, out = s * 8 * 128 * 2, lse = s * 8 * 4;
    CHECK(w.stages[0].memory.cp_buffers == (cp > 1 ? cp * (kv + out + lse) : 0));
    // The distributed optimizer shards over d x cp.
    CHECK(w.stages[0].memory.optimizer ==
          Approx(w.stages[0].params_per_gpu * 12 / (2.0 * cp)).epsilon(1e-12));
    CHECK(w.stages[0].memory.total() ==
          Approx(w.stages[0].memory.weights + w.stages[0].memory.gradients +
                 w.stages[0].memory.optimizer + w.stages[0].memory.activations +
                 w.stages[0].memory.cp_buffers + w.stages[0].memory.logits_transient)
              .epsilon(1e-15));
  }
}

TEST_CASE("context parallel plans are checked as Megatron-Core requires", "[config][context]") {
  const ClusterSpec c = hopper_cluster(4);
  auto messages = [&](const PlanSpec& p, const ModelSpec& m) {
    std::string all;
    for (const SpecIssue& i : plan_layout_issues(p, m, c)) all += i.message + "\n";
    return all;
  };
  PlanSpec p = cp_plan(8, 3, 1, 1, 1);
  CHECK_THAT(messages(p, llama_model(2, 8192)),
             Catch::Contains("seq_length 8192 is not divisible by 2 × context_parallel = 2 × 3"));
  p = cp_plan(8, 4, 1, 1, 1);
  CHECK(messages(p, llama_model(2, 8192)).empty());
  p.sequence_parallel = true;
  CHECK(messages(p, llama_model(2, 8192)).empty());  // 8192 / (8 × 2 × 4) = 128
  CHECK_THAT(messages(p, llama_model(2, 8200)),
             Catch::Contains("tensor_parallel × 2 × context_parallel = 8 × 2 × 4"));
  p.cp_comm_type = CpCommType::kA2a;
  CHECK_THAT(messages(p, llama_model(2, 8192)),
             Catch::Contains("a2a needs num_attention_heads 64 and key/value heads 8 divisible "
                             "by tensor_parallel × context_parallel = 32"));
  p.cp_comm_type = CpCommType::kAllGather;
  CHECK(messages(p, llama_model(2, 8192)).empty());
  p.cp_implementation = CpImplementation::kTorch;
  CHECK(messages(p, llama_model(2, 8192)).empty());
  p.cp_comm_type = CpCommType::kA2a;
  CHECK_THAT(messages(p, llama_model(2, 8192)),
             Catch::Contains("PyTorch's context_parallel has no all-to-all attention"));
  p = cp_plan(8, 2, 1, 2, 1);
  CHECK(messages(p, llama_model(2, 8192)).empty());
  p.data = 3;  // 8 × 2 × 3 = 48 > 32 GPUs
  CHECK_THAT(messages(p, llama_model(2, 8192)),
             Catch::Contains("plan uses 48 GPUs but cluster has 32 (tensor 8 × context 2"));
  p.data = 1;
  p.attention_backend = AttentionBackend::kUnfused;
  CHECK_THAT(messages(p, llama_model(2, 8192)), Catch::Contains("needs fused attention"));
}

TEST_CASE(
    "Megatron context parallel arguments translate: --context-parallel-size and --cp-comm-type",
    "[megatron][context]") {
  const std::string base =
      "--num-layers 2 --hidden-size 64 --num-attention-heads 2 --seq-length 64 "
      "--vocab-size 128 --micro-batch-size 1 ";
  MegatronScenario t =
      translate_megatron_args(base + "--context-parallel-size 4 --cp-comm-type p2p", "l", "x");
  CHECK_THAT(t.yaml, Catch::Contains("context_parallel: 4\n"));
  CHECK_THAT(t.yaml, Catch::Contains("cp_comm_type: p2p\n"));
  t = translate_megatron_args(base + "--context-parallel-size 2 --cp-comm-type allgather", "l",
                              "x");
  CHECK_THAT(t.yaml, Catch::Contains("cp_comm_type: all_gather\n"));
}
