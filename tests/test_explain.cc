// "Where the step goes" (workload/op_classes, report/explain_writer; docs/explain.md): the
// compute classes of every pass and stage sum to the seconds the engine runs, their achieved
// fractions of the roofline lie in (0, 1], and the report's memory terms sum to the stage's.
#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lowering/timeline.h"
#include "report/explain_writer.h"
#include "report/metrics.h"
#include "report/writers.h"
#include "test_support.h"
#include "workload/op_classes.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

struct Case {
  const char* what;
  const char* scenario;
  std::vector<std::string> sets;
};

// Dense, full and selective recompute (unfused and fused attention), FP8, MoE, context
// parallelism and TP communication overlap.
const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"dense", "scenarios/llama3-8b-dgx-h100.yaml", {}},
      {"full recompute, unfused", "scenarios/gpt3-175b-3d.yaml", {}},
      {"selective recompute", "scenarios/llama3-70b-dgx-h100.yaml", {}},
      {"fp8", "scenarios/llama3-70b-dgx-h100.yaml", {"plan.precision=fp8"}},
      {"moe", "scenarios/mixtral-8x7b-dgx-h100.yaml", {}},
      {"context parallel", "scenarios/llama3-70b-32k-cp-dgx-h100.yaml", {}},
      {"tp comm overlap", "scenarios/llama3-70b-dgx-h100.yaml", {"plan.tp_comm_overlap=true"}},
  };
  return all;
}

Scenario load(const Case& c) { return load_scenario(source_path(c.scenario), c.sets); }

// The compute seconds one GPU of stage `s` runs per step, as the engine adds them: every
// chunk's forward and backward once per micro-batch, then the optimizer step.
double stage_compute_s(const Scenario& sc, const StageWork& st) {
  double s = 0;
  for (const ChunkWork& ch : st.chunks) {
    s += sc.plan.num_microbatches * (ch.forward.compute_s + ch.backward.compute_s);
  }
  return s + st.optimizer_s;
}

double stage_flops(const Scenario& sc, const StageWork& st) {
  double f = 0;
  for (const ChunkWork& ch : st.chunks) {
    f += sc.plan.num_microbatches * (ch.forward.flops + ch.backward.flops);
  }
  return f;
}

// A timeline in which every stage's GPUs computed exactly the workload's seconds, with some
// exposed communication, so that make_report has a step to explain.
Timeline synthetic_timeline(const Scenario& sc, const Workload& w) {
  Timeline tl;
  double longest = 0;
  for (size_t s = 0; s < w.stages.size(); ++s) {
    ActorTimeline a;
    a.stage = static_cast<int>(s);
    a.gpus = sc.plan.gpus() / sc.plan.pipeline;
    a.compute_s = stage_compute_s(sc, w.stages[s]);
    a.tp_exposed_s = 0.05 * a.compute_s;
    a.pp_exposed_s = 0.01 * a.compute_s;
    a.dp_exposed_s = 0.02 * a.compute_s;
    longest = std::max(longest, a.compute_s * 1.08);
    tl.actors.push_back(a);
  }
  tl.step_time_s = longest * 1.1;
  return tl;
}

}  // namespace

TEST_CASE("op classes: every op kind has its class and a stable name", "[explain]") {
  const char* names[] = {"gemm",      "grouped_gemm",    "attention", "memory",
                         "optimizer", "kernel_overhead", "host_wait"};
  for (int i = 0; i < kOpClassCount; ++i) {
    CHECK(std::string(op_class_name(static_cast<OpClass>(i))) == names[i]);
  }
  Op op;
  op.kind = OpKind::kGemm;
  op.name = "fc1";
  op.linear = true;
  CHECK(op_class(op) == OpClass::kGemm);
  op.grouped = true;
  CHECK(op_class(op) == OpClass::kGroupedGemm);
  op.grouped = false;
  op.linear = false;
  op.name = "attn_scores_bwd_q";
  CHECK(op_class(op) == OpClass::kAttention);
  op.name = "logits";
  CHECK(op_class(op) == OpClass::kGemm);
  op.kind = OpKind::kAttention;
  CHECK(op_class(op) == OpClass::kAttention);
  op.kind = OpKind::kMemory;
  CHECK(op_class(op) == OpClass::kMemory);
  CHECK(memory_bound(OpClass::kOptimizer));
  CHECK_FALSE(memory_bound(OpClass::kKernelOverhead));
}

TEST_CASE("op classes: a stage's class seconds sum to its compute seconds", "[explain]") {
  for (const Case& c : cases()) {
    INFO(c.what);
    const Scenario sc = load(c);
    const Workload w = build_workload(sc);
    for (const StageWork& st : w.stages) {
      for (const ChunkWork& ch : st.chunks) {
        for (const Pass* pass : {&ch.forward, &ch.backward}) {
          CHECK(pass->classes.seconds() == Approx(pass->compute_s).epsilon(1e-9));
        }
      }
      const double compute = stage_compute_s(sc, st);
      CHECK(st.compute.seconds() == Approx(compute).epsilon(1e-9));
      // The tensor-core classes' FLOPs are every FLOP the passes run.
      const double flops = st.compute[OpClass::kGemm].flops +
                           st.compute[OpClass::kGroupedGemm].flops +
                           st.compute[OpClass::kAttention].flops;
      CHECK(flops == Approx(stage_flops(sc, st)).epsilon(1e-9));
      CHECK(st.compute[OpClass::kGemm].seconds > 0);
      CHECK(st.compute[OpClass::kAttention].seconds > 0);
      CHECK(st.compute[OpClass::kMemory].seconds > 0);
      CHECK(st.compute[OpClass::kOptimizer].seconds > 0);
      CHECK(st.compute[OpClass::kKernelOverhead].seconds > 0);
      CHECK((st.compute[OpClass::kGroupedGemm].seconds > 0) == sc.model.moe());
    }
  }
}

TEST_CASE("op classes: achieved fractions of the roofline are above 0 and at most 1", "[explain]") {
  for (const Case& c : cases()) {
    INFO(c.what);
    const Scenario sc = load(c);
    const Workload w = build_workload(sc);
    for (const StageWork& st : w.stages) {
      for (int i = 0; i < kOpClassCount; ++i) {
        const OpClass k = static_cast<OpClass>(i);
        const OpClassTotals& t = st.compute[k];
        INFO(op_class_name(k));
        if (t.seconds <= 0 || k == OpClass::kKernelOverhead || k == OpClass::kHostWait) continue;
        const double fraction = memory_bound(k) ? t.bytes / t.peak_bytes : t.flops / t.peak_flops;
        CHECK(fraction > 0);
        CHECK(fraction <= 1);
      }
      // Memory-bound kernels run at the fitted fraction of HBM bandwidth, overhead apart.
      const OpClassTotals& m = st.compute[OpClass::kMemory];
      CHECK(m.bytes / m.peak_bytes == Approx(sc.cluster.gpu.efficiency.memory).epsilon(1e-9));
    }
  }
}

TEST_CASE("explain: the report's section, its sums and its JSON keys", "[explain]") {
  for (const Case& c : cases()) {
    INFO(c.what);
    const Scenario sc = load(c);
    const Workload w = build_workload(sc);
    const Report r = make_report(sc, w, synthetic_timeline(sc, w), "fast");
    const Explain& e = r.explain;
    // The busiest and the fullest stages (tensors and reserve).
    for (const StageReport& s : r.stages) {
      CHECK(s.compute_s <= e.compute_s);
      CHECK(s.device_gib <= r.stages[e.memory_stage].device_gib);
      CHECK(s.device_gib == Approx(s.memory_gib + s.reserved_gib).epsilon(1e-12));
    }
    CHECK(e.compute_s == r.stages[e.stage].compute_s);
    REQUIRE(e.compute.size() == static_cast<size_t>(kOpClassCount));
    double seconds = 0;
    for (const ExplainClass& x : e.compute) {
      seconds += x.seconds;
      for (const auto& f : {x.fraction_of_peak, x.fraction_of_hbm_bandwidth}) {
        if (!f) continue;
        CHECK(*f > 0);
        CHECK(*f <= 1);
      }
    }
    CHECK(seconds == Approx(e.compute_s).epsilon(1e-9));

    const nlohmann::json j = nlohmann::json::parse(format_json(r)).at("explain");
    CHECK(j.at("stage") == e.stage);
    double json_seconds = 0, shares = 0;
    for (const auto& x : j.at("compute")) {
      for (const char* key : {"class", "kernels", "seconds", "fraction_of_compute", "tflop",
                              "hbm_gib", "fraction_of_peak", "fraction_of_hbm_bandwidth"}) {
        CHECK(x.contains(key));
      }
      json_seconds += x.at("seconds").get<double>();
      shares += x.at("fraction_of_compute").get<double>();
    }
    CHECK(json_seconds == Approx(j.at("compute_s").get<double>()).epsilon(1e-9));
    CHECK(shares == Approx(1).epsilon(1e-9));
    for (const char* kind : {"tp", "pp", "dp", "dp_param_gather", "cp", "ep"}) {
      const double f = j.at("exposed_comm").at(kind).at("fraction_of_step");
      CHECK(f >= 0);
      CHECK(f <= 1);
    }
    CHECK(j.at("exposed_comm").at("tp").at("fraction_of_step").get<double>() ==
          Approx(r.tp_comm_exposed_s / r.step_time_s).epsilon(1e-12));
    // Memory terms sum to the fullest stage's footprint, which is the report's peak.
    const auto& m = j.at("memory_gib");
    double terms = 0;
    for (const char* key : {"weights", "gradients", "optimizer", "activations", "cp_buffers",
                            "dispatch_buffers", "logits"}) {
      terms += m.at(key).get<double>();
    }
    CHECK(terms == Approx(m.at("total").get<double>()).epsilon(1e-12));
    CHECK(m.at("total").get<double>() == Approx(r.peak_memory_gib).epsilon(1e-12));
    CHECK(m.at("reserved").get<double>() == r.memory_reserved_gib);
    CHECK(j.at("memory_stage") == e.memory_stage);

    const std::string table = format_table(r);
    CHECK(table.find("where the step goes") != std::string::npos);
    CHECK(table.find("gemm") != std::string::npos);
    CHECK(table.find("% of peak") != std::string::npos);
    CHECK(table.find("% of HBM") != std::string::npos);
  }
}
