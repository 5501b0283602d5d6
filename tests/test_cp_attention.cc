// Context-parallel attention as each implementation runs it (workload/cp_attention.h): the
// ring's steps, their transfers and FLOPs, the causal block split, the merge kernels, the
// transient buffers, and that longer sequences never run faster per token.
#include <catch2/catch.hpp>

#include "config/scenario.h"
#include "test_support.h"
#include "workload/cp_attention.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

// Llama 3 8B's attention: 32 heads, 8 key/value groups, head dim 128.
ModelSpec llama8b(int seq) {
  ModelSpec m = gpt_model(1, 4096, 32, seq, 128256);
  m.num_query_groups = 8;
  m.ffn_hidden_size = 14336;
  m.swiglu = true;
  m.rms_norm = true;
  m.attention_dropout = 0;
  m.hidden_dropout = 0;
  return m;
}

LayerDims dims(int seq, int t, int cp, CpCommType comm, bool torch) {
  PlanSpec p = plan(t, 1, 1, 1, 1, ScheduleKind::k1F1B);
  p.context = cp;
  p.cp_comm_type = comm;
  p.cp_implementation = torch ? CpImplementation::kTorch : CpImplementation::kTransformerEngine;
  return make_layer_dims(llama8b(seq), p, GpuArchitecture::kHopper);
}

struct Tally {
  int blocks = 0, transfers = 0, exposed = 0;
  double transfer_bytes = 0, memory_bytes = 0, flops = 0, model_flops = 0;
};

Tally tally(const std::vector<Op>& ops) {
  Tally t;
  for (const Op& op : ops) {
    t.blocks += op.kind == OpKind::kAttention;
    if (op.kind == OpKind::kCpTransfer) {
      t.transfers += 1;
      t.exposed += op.overlaps_next ? 0 : 1;
      t.transfer_bytes += op.bytes;
    }
    if (op.kind == OpKind::kMemory) t.memory_bytes += op.bytes;
    t.flops += op.flops();
    t.model_flops += op.model_flops();
  }
  return t;
}

// The whole causal attention of one sequence on one TP rank: what cp ranks split.
AttentionShape whole(int seq, int t) { return {1, 32.0 / t, 8.0 / t, double(seq), 128, true}; }

}  // namespace

TEST_CASE("every implementation runs 1/cp of the causal attention per rank",
          "[workload][context]") {
  const int seq = 131072;
  for (int cp : {2, 4, 8}) {
    for (CpCommType comm : {CpCommType::kP2p, CpCommType::kAllGather, CpCommType::kA2a}) {
      for (bool torch : {false, true}) {
        if (torch && comm == CpCommType::kA2a) continue;
        const LayerDims d = dims(seq, 1, cp, comm, torch);
        for (bool bwd : {false, true}) {
          INFO("cp " << cp << " " << cp_comm_type_name(comm) << (torch ? " torch" : " te")
                     << (bwd ? " backward" : " forward"));
          const Tally t = tally(cp_attention_ops(d, bwd));
          CHECK(t.flops == Approx(whole(seq, 1).flops(bwd) / cp).epsilon(1e-12));
          CHECK(t.model_flops == Approx(whole(seq, 1).model_flops(bwd) / cp).epsilon(1e-12));
        }
      }
    }
  }
}

TEST_CASE("the p2p ring: cp blocks, the causal split and its correction kernels",
          "[workload][context]") {
  const int seq = 65536, cp = 4;
  const LayerDims d = dims(seq, 1, cp, CpCommType::kP2p, false);
  const double s = seq / cp, e = 2;
  const double kv = 2 * s * 8 * 128 * e;  // K and V of s tokens, 8 groups
  const double q = s * 32 * 128, lse = s * 32;
  CHECK(cp_kv_bytes(d) == kv);
  const std::vector<Op> fwd = ring_attention_ops(d, false), bwd = ring_attention_ops(d, true);
  // Block 0 causal over the rank's s tokens; blocks 1..cp-1 unmasked, s queries over s/2 keys.
  int i = 0;
  for (const Op& op : fwd) {
    if (op.kind != OpKind::kAttention) continue;
    CHECK(op.attention.s == s);
    CHECK(op.attention.causal == (i == 0));
    CHECK(op.attention.keys() == (i == 0 ? s : s / 2));
    CHECK(op.cp_block == (i > 0));
    ++i;
  }
  CHECK(i == cp);
  const Tally f = tally(fwd), b = tally(bwd);
  CHECK(f.transfers == cp - 1);
  CHECK(f.exposed == 0);
  CHECK(f.transfer_bytes == (cp - 1) * kv);
  // LSE corrections of steps 1..cp-1 (fp32, two reads and a write), then the output
  // correction: the first step's output copied, every later one read and added.
  CHECK(f.memory_bytes == (cp - 1) * 12 * lse + 2 * e * q + (cp - 1) * 3 * e * q + cp * 8 * lse);
  CHECK(b.transfers == cp + 1);
  CHECK(b.exposed == 1);  // the last dK/dV home
  CHECK(b.transfer_bytes == (2 * cp - 1) * kv);
  CHECK(b.memory_bytes == cp * 3 * e * (q + kv / e));
}

TEST_CASE("PyTorch's context_parallel: all-gather rotation, fp32 merges and dK/dV",
          "[workload][context]") {
  const int seq = 262144, cp = 8;
  const double s = seq / cp, e = 2;
  const double kv = 2 * s * 32 * 128 * e;  // K/V repeated to all 32 heads (torchtitan)
  const double q = s * 32 * 128, k = s * 32 * 128, lse = s * 32;
  for (CpCommType comm : {CpCommType::kAllGather, CpCommType::kP2p}) {
    const bool gather = comm == CpCommType::kAllGather;
    const LayerDims d = dims(seq, 1, cp, comm, true);
    CHECK(cp_kv_bytes(d) == kv);
    const std::vector<Op> fwd = cp_attention_ops(d, false), bwd = cp_attention_ops(d, true);
    const Tally f = tally(fwd), b = tally(bwd);
    CHECK(f.blocks == cp);
    CHECK(b.blocks == cp);
    // All-gather: one transfer of the other ranks' K/V beside block 0. p2p: one per step.
    CHECK(f.transfers == (gather ? 1 : cp - 1));
    CHECK(f.transfer_bytes == (cp - 1) * kv);
    if (gather) {
      CHECK(fwd[0].kind == OpKind::kCpTransfer);
      CHECK(fwd[0].bytes == (cp - 1) * kv);
      CHECK(fwd[1].kind == OpKind::kAttention);
      CHECK(fwd[1].attention.causal);
    }
    // Backward: the K/V again, and cp fp32 dK/dV hops (the last one exposed).
    CHECK(b.transfer_bytes == (cp - 1) * kv + cp * 2 * k * 4);
    CHECK(b.exposed == 1);
    // Forward merges: every step's output and LSE cast to fp32, steps 1..cp-1 merged (three
    // fp32 passes over the output, six over the LSE), the result cast back.
    CHECK(f.memory_bytes ==
          cp * (e + 4) * (q + lse) + (cp - 1) * (36 * q + 72 * lse) + (4 + e) * q);
    CHECK(b.memory_bytes == cp * ((8 + e) * (q + 2 * k) + 16 * k) + (8 + e) * (q + 2 * k));
  }
}

TEST_CASE("all_gather and a2a: exposed exchanges around one attention", "[workload][context]") {
  const int seq = 131072, cp = 4, t = 2;
  const double s = seq / cp, e = 2;
  const double kv = 2 * s * (8.0 / t) * 128 * e, q = s * (32.0 / t) * 128;
  const LayerDims ag = dims(seq, t, cp, CpCommType::kAllGather, false);
  const Tally f = tally(cp_attention_ops(ag, false)), b = tally(cp_attention_ops(ag, true));
  CHECK(f.blocks == 1);
  CHECK(f.exposed == 1);
  CHECK(f.transfer_bytes == (cp - 1) * kv);
  CHECK(b.exposed == 2);  // K/V gathered again, dK/dV reduce-scattered
  CHECK(b.transfer_bytes == 2 * (cp - 1) * kv);
  const LayerDims a2a = dims(seq, t, cp, CpCommType::kA2a, false);
  const std::vector<Op> ops = cp_attention_ops(a2a, false);
  const Tally u = tally(ops);
  CHECK(u.exposed == 2);
  // Each rank keeps 1/cp of Q, K, V and of the output and sends the rest.
  CHECK(u.transfer_bytes == Approx((cp - 1.0) / cp * (2 * q + kv / e) * e).epsilon(1e-12));
  for (const Op& op : ops) {
    if (op.kind != OpKind::kAttention) continue;
    CHECK(op.attention.s == seq);  // the whole sequence
    CHECK(op.attention.heads == 32.0 / t / cp);
    CHECK(op.attention.causal);
  }
}

TEST_CASE("transient context-parallel buffers", "[workload][context]") {
  const int seq = 262144, cp = 8;
  const double s = seq / cp, e = 2;
  const double kv = 2 * s * 8 * 128 * e, q = s * 32 * 128, lse = s * 32;
  // Transformer Engine's p2p forward keeps every step's K/V, output and LSE until the output
  // correction: cp of each.
  CHECK(cp_buffer_bytes(dims(seq, 1, cp, CpCommType::kP2p, false)) == cp * (kv + e * q + 4 * lse));
  CHECK(cp_buffer_bytes(dims(seq, 1, cp, CpCommType::kAllGather, false)) == 2 * cp * kv);
  CHECK(cp_buffer_bytes(dims(seq, 1, 1, CpCommType::kP2p, false)) == 0);
}

TEST_CASE("longer sequences never run faster per token", "[workload][context]") {
  // Llama 3 8B on H100 at a fixed number of tokens per rank (as torchtitan's Table 2 runs it):
  // per-token time of a layer grows with the sequence, for every implementation.
  for (CpCommType comm : {CpCommType::kP2p, CpCommType::kAllGather}) {
    for (bool torch : {false, true}) {
      double last = 0;
      for (int cp : {1, 2, 4, 8}) {
        Scenario sc = load_scenario(source_path("scenarios/llama3-8b-dgx-h100.yaml"), {});
        sc.model = llama8b(32768 * cp);
        sc.plan.tensor = 1;
        sc.plan.context = cp;
        sc.plan.data = 8 / cp;
        sc.plan.sequence_parallel = false;
        sc.plan.micro_batch_size = 1;
        sc.plan.global_batch_size = 8 / cp;
        sc.plan.num_microbatches = 1;
        sc.plan.cp_comm_type = comm;
        sc.plan.cp_implementation =
            torch ? CpImplementation::kTorch : CpImplementation::kTransformerEngine;
        const Workload w = build_workload(sc);
        const ChunkWork& c = w.stages[0].chunks[0];
        const double per_token = (c.forward.compute_s + c.backward.compute_s) / 32768;
        INFO("cp " << cp << " " << cp_comm_type_name(comm) << (torch ? " torch" : " te"));
        CHECK(per_token > last);
        last = per_token;
      }
    }
  }
}
