// The work of a step per pipeline stage (workload/stage_work): Megatron FLOPs, parameter counts,
// activation and state memory per stage, recomputation, interleaving and uneven splits.
#include <catch2/catch.hpp>

#include "config/scenario.h"
#include "test_support.h"
#include "workload/layer_ops.h"
#include "workload/moe_model.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

// Megatron-LM's num_floating_point_operations for a GPT (MHA, 4h MLP, no gating): Korthikanti
// et al. 2022, eq. 7 with the causal mask halving the attention scores (s / (12 h), not s / (6 h)).
double model_flops_formula(double B, double l, double s, double h, double V) {
  return 72 * B * l * s * h * h * (1 + s / (12 * h) + V / (12 * h * l));
}

}  // namespace

TEST_CASE("step FLOPs equal the Megatron model-FLOPs formula", "[workload]") {
  struct Case {
    int t, p, d, b, m;
  };
  for (Case c :
       {Case{8, 8, 16, 1, 96}, Case{1, 1, 1, 1, 1}, Case{4, 2, 3, 2, 5}, Case{2, 4, 1, 4, 8}}) {
    Scenario sc = scenario(a100_cluster(128), gpt_model(96, 12288, 96, 2048, 51200),
                           plan(c.t, c.p, c.d, c.b, c.m, ScheduleKind::k1F1B));
    const Workload w = build_workload(sc);
    const double B = double(c.b) * c.m * c.d;
    const double expected = model_flops_formula(B, 96, 2048, 12288, 51200);
    CHECK(w.model_flops_per_step == Approx(expected).epsilon(1e-12));
    CHECK(w.hardware_flops_per_step == Approx(expected).epsilon(1e-12));
  }
}

TEST_CASE("MFU's model FLOPs are Megatron-LM's num_floating_point_operations; HFU adds recompute",
          "[workload]") {
  // Shipped scenarios with GQA and SwiGLU (Llama 3), at their long sequences and under
  // context parallelism, FP8 and every recomputation: the model FLOPs of a step equal
  // Megatron-LM's formula (moe_model.h megatron_model_flops), whatever the plan; the FLOPs HFU
  // counts equal them without recomputation and exceed them with.
  for (const char* file :
       {"scenarios/llama3-8b-dgx-h100.yaml", "scenarios/llama3-70b-32k-cp-dgx-h100.yaml",
        "scenarios/llama3-70b-dgx-h100.yaml"}) {
    for (const char* recompute : {"none", "selective", "full"}) {
      const Scenario sc =
          load_scenario(source_path(file), {std::string("plan.recompute=") + recompute});
      const Workload w = build_workload(sc);
      CAPTURE(file, recompute);
      CHECK(w.model_flops_per_step ==
            Approx(megatron_model_flops(sc.model, sc.plan.global_batch_size)).epsilon(1e-12));
      CHECK(w.megatron_flops_per_step == Approx(w.model_flops_per_step).epsilon(1e-12));
      if (std::string(recompute) == "none") {
        CHECK(w.hardware_flops_per_step == Approx(w.model_flops_per_step).epsilon(1e-12));
      } else {
        CHECK(w.hardware_flops_per_step > w.model_flops_per_step);
      }
    }
  }
}

TEST_CASE("full recomputation adds one forward pass: F = 96 B s l h^2 (...)", "[workload]") {
  Scenario sc = scenario(a100_cluster(128), gpt_model(96, 12288, 96, 2048, 51200),
                         plan(8, 8, 16, 1, 96, ScheduleKind::k1F1B));
  sc.plan.recompute = Recompute::kFull;
  const Workload w = build_workload(sc);
  const double B = 1536, s = 2048, l = 96, h = 12288, V = 51200;
  // Narayanan et al. 2021: 96 B s l h^2 (1 + s/(6h) + V/(16 l h)), with the scores halved.
  CHECK(w.hardware_flops_per_step ==
        Approx(96 * B * s * l * h * h * (1 + s / (12 * h) + V / (16 * l * h))).epsilon(1e-12));
  CHECK(w.model_flops_per_step == Approx(model_flops_formula(B, l, s, h, V)).epsilon(1e-12));
}

TEST_CASE("selective recomputation re-runs only the attention core", "[workload]") {
  Scenario sc = scenario(a100_cluster(128), gpt_model(96, 12288, 96, 2048, 51200),
                         plan(8, 8, 16, 1, 96, ScheduleKind::k1F1B));
  sc.plan.recompute = Recompute::kSelective;
  const Workload w = build_workload(sc);
  const double B = 1536, s = 2048, l = 96, h = 12288, V = 51200;
  // The model's FLOPs and the attention core's forward once more (2 B s^2 h l, causal).
  CHECK(w.hardware_flops_per_step ==
        Approx(72 * B * l * s * h * h * (1 + s / (9 * h) + V / (12 * h * l))).epsilon(1e-12));
  CHECK(w.hardware_flops_per_step > w.model_flops_per_step);
}

TEST_CASE("parameter count equals the Megatron formula", "[workload]") {
  const ModelSpec m = gpt_model(96, 12288, 96, 2048, 51200);
  const double l = 96, h = 12288, V = 51200, s = 2048;
  const double formula = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
  // trident also counts the final layer norm (2h), which the formula leaves out.
  CHECK(model_params(m) == Approx(formula + 2 * h).epsilon(1e-12));
  CHECK(model_params(m) == Approx(174.6e9).epsilon(0.01));
}

TEST_CASE("each layer has two TP all-reduces forward and two backward", "[workload]") {
  Scenario sc = scenario(a100_cluster(1), gpt_model(8, 1024, 16, 512, 1000),
                         plan(4, 2, 1, 1, 4, ScheduleKind::k1F1B));
  const Workload w = build_workload(sc);
  // Stage 0: embedding all-reduce + 2 per layer; last stage: 2 per layer + 2 cross-entropy.
  CHECK(w.stages[0].chunks[0].forward.collectives == 1 + 2 * 4);
  CHECK(w.stages[1].chunks[0].forward.collectives == 2 * 4 + 2);
  CHECK(w.stages[0].chunks[0].backward.collectives == 2 * 4);
  CHECK(w.stages[1].chunks[0].backward.collectives == 2 * 4 + 1);
  const double bsh_bytes = 1.0 * 512 * 1024 * 2;
  CHECK(w.stages[0].chunks[0].backward.tp_bytes == Approx(8 * bsh_bytes));
}

TEST_CASE("activation memory per layer equals Korthikanti's formulas", "[workload][memory]") {
  const double s = 2048, b = 1, h = 12288, a = 96, t = 8;
  Scenario sc = scenario(a100_cluster(128), gpt_model(96, 12288, 96, 2048, 51200),
                         plan(8, 8, 16, 1, 96, ScheduleKind::k1F1B));
  const double sbh = s * b * h;
  auto per_layer = [&](Recompute r) {
    sc.plan.recompute = r;
    const Workload w = build_workload(sc);
    // A middle stage holds only transformer layers.
    return w.stages[3].chunks[0].activation_bytes / w.stages[3].num_layers;
  };
  CHECK(per_layer(Recompute::kNone) == Approx(sbh * (10 + 24 / t + 5 * a * s / (h * t))));
  CHECK(per_layer(Recompute::kSelective) == Approx(sbh * (10 + 24 / t)));
  CHECK(per_layer(Recompute::kFull) == Approx(2 * sbh));
}

TEST_CASE("1F1B keeps p - i micro-batches in flight on stage i, GPipe all m",
          "[workload][memory]") {
  Scenario sc = scenario(a100_cluster(128), gpt_model(96, 12288, 96, 2048, 51200),
                         plan(8, 8, 16, 1, 96, ScheduleKind::k1F1B));
  Workload w = build_workload(sc);
  CHECK(w.stages[0].memory.microbatches_in_flight == 8);
  CHECK(w.stages[7].memory.microbatches_in_flight == 1);
  sc.plan.schedule = ScheduleKind::kGpipe;
  w = build_workload(sc);
  CHECK(w.stages[3].memory.microbatches_in_flight == 96);
}

TEST_CASE("GPT-3 175B does not fit one A100, t=8 p=8 full recompute does", "[workload][memory]") {
  Scenario one = scenario(a100_cluster(1), gpt_model(96, 12288, 96, 2048, 51200),
                          plan(1, 1, 1, 1, 1, ScheduleKind::k1F1B));
  CHECK(build_workload(one).stages[0].memory.total() > one.cluster.gpu.memory_bytes);
  Scenario split = scenario(a100_cluster(128), gpt_model(96, 12288, 96, 2048, 51200),
                            plan(8, 8, 16, 1, 96, ScheduleKind::k1F1B));
  split.plan.recompute = Recompute::kFull;
  const Workload w = build_workload(split);
  for (const StageWork& st : w.stages) CHECK(st.memory.total() < split.cluster.gpu.memory_bytes);
}

TEST_CASE("sequence parallel activation memory and stage messages shrink by t",
          "[workload][memory]") {
  const double s = 2048, b = 1, h = 12288, a = 96, t = 8, sbh = s * b * h;
  Scenario sc = scenario(a100_cluster(128), gpt_model(96, 12288, 96, 2048, 51200),
                         plan(8, 8, 16, 1, 96, ScheduleKind::k1F1B));
  const double plain_p2p = build_workload(sc).stages[0].p2p_bytes;
  sc.plan.sequence_parallel = true;
  Workload w = build_workload(sc);
  CHECK(w.stages[3].chunks[0].activation_bytes / 12 ==
        Approx(sbh * (34 / t + 5 * a * s / (h * t))));
  CHECK(w.stages[0].p2p_bytes == Approx(plain_p2p / t));
  sc.plan.recompute = Recompute::kSelective;
  w = build_workload(sc);
  CHECK(w.stages[3].chunks[0].activation_bytes / 12 == Approx(34 * sbh / t));
}

TEST_CASE("interleaving multiplies first-stage activations by 1 + (p-1)/(p v)",
          "[workload][memory]") {
  for (int v : {2, 3, 4}) {
    Scenario sc = scenario(a100_cluster(128), gpt_model(96, 12288, 96, 2048, 51200),
                           plan(8, 4, 1, 1, 16, ScheduleKind::k1F1B));
    const double plain = build_workload(sc).stages[0].memory.activations;
    sc.plan.schedule = ScheduleKind::kInterleaved1F1B;
    sc.plan.virtual_stages = v;
    // Embedding-free comparison: stage 0 holds only layers (V = 51200 lives on the last stage).
    const double interleaved = build_workload(sc).stages[0].memory.activations;
    CHECK(interleaved / plain == Approx(1 + 3.0 / (4 * v)));
  }
}

TEST_CASE("distributed optimizer divides optimizer state by d", "[workload][memory]") {
  Scenario sc = scenario(a100_cluster(128), gpt_model(96, 12288, 96, 2048, 51200),
                         plan(8, 8, 16, 1, 96, ScheduleKind::k1F1B));
  const double state = build_workload(sc).stages[2].memory.optimizer;
  sc.plan.distributed_optimizer = true;
  const Workload w = build_workload(sc);
  CHECK(w.stages[2].memory.optimizer == Approx(state / 16));
  CHECK(w.stages[2].param_gather_bytes == Approx(w.stages[2].params_per_gpu * 2));
}

TEST_CASE("uneven pipeline splits put the given layers on each stage", "[workload]") {
  Scenario sc = scenario(a100_cluster(128), gpt_model(70, 14336, 112, 2048, 250880),
                         plan(4, 12, 1, 1, 12, ScheduleKind::k1F1B));
  sc.plan.pipeline_layers = {5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5};
  const Workload w = build_workload(sc);
  CHECK(w.stages[0].num_layers == 5);
  CHECK(w.stages[1].chunks[0].first_layer == 5);
  CHECK(w.stages[11].num_layers == 5);
  CHECK(w.stages[11].chunks[0].first_layer == 65);
  // FLOPs still add up to the whole model.
  const double B = 12, l = 70, s = 2048, h = 14336, V = 250880;
  CHECK(w.model_flops_per_step == Approx(model_flops_formula(B, l, s, h, V)).epsilon(1e-12));
}

TEST_CASE("tensor-core kernels inside a step run at gpu.efficiency.in_training of isolated",
          "[workload]") {
  // Free memory traffic and overheads, no host launch queue: a pass is its GEMMs and
  // attention, so halving the in-training fraction doubles it exactly.
  const ModelSpec m = gpt_model(4, 1024, 16, 1024, 32000);
  ClusterSpec c = free_comm_cluster(1);
  PlanSpec p = plan(1, 1, 1, 1, 2, ScheduleKind::k1F1B);
  p.stack.host_time_per_kernel_s = 0;
  const Workload isolated = build_workload(scenario(c, m, p));
  c.gpu.efficiency.in_training = 0.5;
  const Workload slowed = build_workload(scenario(c, m, p));
  const Pass& a = isolated.stages[0].chunks[0].forward;
  const Pass& b = slowed.stages[0].chunks[0].forward;
  REQUIRE(a.compute_s > 0);
  CHECK(b.compute_s == Approx(2 * a.compute_s).epsilon(1e-6));
  CHECK(b.flops == a.flops);  // the work is the same; only its rate changed
}

TEST_CASE("tensor-core kernels inside a step run at the sustained clock (gpu.clocks)",
          "[workload]") {
  // Same free cluster: peaks quoted at 2000 MHz, dense work sustained at 1500 MHz makes every
  // pass 4/3 as long; a clocks block without `sustained` changes nothing.
  const ModelSpec m = gpt_model(4, 1024, 16, 1024, 32000);
  ClusterSpec c = free_comm_cluster(1);
  PlanSpec p = plan(1, 1, 1, 1, 2, ScheduleKind::k1F1B);
  p.stack.host_time_per_kernel_s = 0;  // the GPU's time alone
  const auto pass = [&](const ClusterSpec& cluster) {
    return build_workload(scenario(cluster, m, p)).stages[0].chunks[0].forward.compute_s;
  };
  const double quoted = pass(c);
  c.gpu.clocks.quoted_hz = 2000e6;
  c.gpu.clocks.boost_hz = 2100e6;
  REQUIRE(quoted > 0);
  CHECK(pass(c) == Approx(quoted).epsilon(1e-12));
  c.gpu.clocks.sustained_hz = 1500e6;
  CHECK(pass(c) == Approx(quoted * 2000 / 1500).epsilon(1e-6));
}
