// The engine's shortcut record (decide_shortcuts) and what the engine records under it: fused
// tensor-parallel collectives appear in the trace with the time the engine gave them, which is
// what full fidelity simulates and what the closed form says; the simulation-activity limit
// counts the actors and collectives the shortcuts leave, and bounds what the engine runs.
// Simulations run in child processes (one SimGrid engine per process).
#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "config/checks.h"
#include "core/errors.h"
#include "core/isolated_run.h"
#include "engine/simulator.h"
#include "layout/program.h"
#include "lowering/fused_passes.h"
#include "lowering/shortcuts.h"
#include "report/trace_writer.h"
#include "test_support.h"
#include "workload/collective_time.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;
using nlohmann::json;

namespace {

// Llama 3 70B cut down to 8 layers on 32 DGX H100 GPUs (t = 8 in a node, p = 2, d = 2, NVLS
// in-switch all-reduce), two micro-batches, sequence parallelism off: every TP collective is
// an all-reduce of one b*s*h buffer.
Scenario h100_scenario() {
  return load_scenario(source_path("scenarios/llama3-70b-dgx-h100.yaml"),
                       {"cluster.nodes=4", "model.num_layers=8", "plan.pipeline_parallel=2",
                        "plan.data_parallel=2", "plan.global_batch_size=4",
                        "plan.sequence_parallel=false", "plan.overlap_grad_reduce=false"});
}

std::string simulate_trace(const Scenario& sc, Fidelity fidelity) {
  return run_isolated([&]() {
    const std::vector<StageProgram> programs = build_programs(sc.plan);
    const Workload w = build_workload(sc, programs);
    SimOptions opt;
    opt.fidelity = fidelity;
    return format_trace(sc, w, simulate_step(sc, w, programs, opt));
  });
}

// Durations (µs) of the trace's TP collectives, by bytes; and the timing of each.
struct TpEvents {
  std::map<double, std::vector<double>> durations;
  std::map<std::string, int> timing;
};

TpEvents tp_events(const json& trace) {
  TpEvents out;
  for (const json& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X" || e.at("cat") != "tp") continue;
    const json& args = e.at("args");
    REQUIRE(args.at("op") == "all-reduce");
    out.durations[args.at("bytes").get<double>()].push_back(e.at("dur").get<double>());
    out.timing[args.at("timing").get<std::string>().substr(0, 11)] += 1;
  }
  return out;
}

}  // namespace

TEST_CASE("shortcuts: full fidelity takes none", "[shortcuts]") {
  const Shortcuts s = decide_shortcuts(h100_scenario(), Fidelity::kFull);
  for (const auto& [name, shortcut] : named_shortcuts(s)) {
    INFO(name);
    CHECK_FALSE(shortcut->taken);
    CHECK(shortcut->reason.find("full fidelity") == 0);
  }
}

TEST_CASE("shortcuts: TP in one node is fused, TP across nodes is not", "[shortcuts]") {
  const Shortcuts in_node = decide_shortcuts(h100_scenario(), Fidelity::kFast);
  CHECK(in_node.group_actor.taken);
  CHECK(in_node.fused_tp.taken);
  CHECK(in_node.collapsed_steps.taken);
  CHECK(in_node.one_rank_flows.taken);  // 8 NICs per node, non-blocking fat tree
  CHECK(in_node.one_replica.taken);     // data-parallel peers in different nodes

  // t = 16 on 8-GPU nodes: each TP group spans two NVLink islands.
  const Scenario across = scenario(a100_cluster(4), gpt_model(8, 1024, 16, 512, 32000),
                                   plan(16, 1, 2, 1, 4, ScheduleKind::k1F1B));
  const Shortcuts s = decide_shortcuts(across, Fidelity::kFast);
  CHECK(s.group_actor.taken);
  CHECK_FALSE(s.fused_tp.taken);
  CHECK(s.fused_tp.reason.find("spans NVLink islands") != std::string::npos);

  // Pipeline neighbours in one node share its NVLink links with the TP collectives.
  Scenario shared = scenario(a100_cluster(2), gpt_model(8, 1024, 16, 512, 32000),
                             plan(4, 2, 2, 1, 4, ScheduleKind::k1F1B));
  shared.plan.placement = {ParallelDim::kTensor, ParallelDim::kPipeline, ParallelDim::kData};
  const Shortcuts sh = decide_shortcuts(shared, Fidelity::kFast);
  CHECK_FALSE(sh.fused_tp.taken);
  CHECK(sh.fused_tp.reason.find("pipeline") != std::string::npos);

  // An oversubscribed fabric can bottleneck a TP group's flows together.
  Scenario tapered = h100_scenario();
  tapered.cluster.network.oversubscription = 2;
  const Shortcuts tp = decide_shortcuts(tapered, Fidelity::kFast);
  CHECK_FALSE(tp.one_rank_flows.taken);
  CHECK_FALSE(tp.one_replica.taken);
  CHECK(tp.fused_tp.taken);
}

TEST_CASE("fast trace's fused TP all-reduces take the engine's time, as full fidelity does",
          "[shortcuts][trace]") {
  const Scenario sc = h100_scenario();
  REQUIRE(sc.cluster.nvlink.in_switch_reduction_efficiency > 0);
  const json fast = json::parse(simulate_trace(sc, Fidelity::kFast));
  const json full = json::parse(simulate_trace(sc, Fidelity::kFull));

  // The trace carries the engine's shortcut record.
  const json& shortcuts = fast.at("otherData").at("shortcuts");
  CHECK(shortcuts.at("fused_tp").at("taken") == true);
  CHECK(full.at("otherData").at("shortcuts").at("fused_tp").at("taken") == false);

  const TpEvents f = tp_events(fast), g = tp_events(full);
  CHECK(f.timing.count("closed form") == 1);
  CHECK(f.timing.count("simulated") == 0);
  CHECK(g.timing.count("simulated") == 1);
  CHECK(g.timing.count("closed form") == 0);
  REQUIRE(!f.durations.empty());
  for (const auto& [bytes, durations] : f.durations) {
    INFO("all-reduce of " << bytes << " bytes");
    // The engine's closed form: in-switch (NVLS) reduction, not a ring.
    const double closed_form =
        island_collective_time(CollectiveOp::kAllReduce, 8, bytes, sc.cluster) * 1e6;
    for (double d : durations) CHECK(d == Approx(closed_form).epsilon(1e-4).margin(1e-3));  // ns
    REQUIRE(g.durations.count(bytes) == 1);
    // Full fidelity simulates the flows of every GPU; its collectives take the same time.
    for (double d : g.durations.at(bytes)) CHECK(d == Approx(closed_form).epsilon(0.01));
  }
  // The big all-reduces (b*s*h) are the ones that matter: the ring would be 1.35x longer.
  const double big = f.durations.rbegin()->first;
  const NvlinkSpec& nvl = sc.cluster.nvlink;
  CHECK(ring_collective_time(CollectiveOp::kAllReduce, 8, big, nvl.latency, nvl.bandwidth,
                             nvl.protocol_efficiency) *
            1e6 >
        1.2 * f.durations.rbegin()->second.front());
}

TEST_CASE("beyond the trace-size budget only data rank 0 records closed-form TP collectives",
          "[shortcuts][trace]") {
  // One stage per node: TP groups alone on their NVLink links, their collectives fused.
  const Scenario sc = scenario(a100_cluster(2), gpt_model(4, 1024, 16, 512, 32000),
                               plan(2, 2, 4, 1, 2, ScheduleKind::k1F1B));
  const std::string counts = run_isolated([&]() {
    const std::vector<StageProgram> programs = build_programs(sc.plan);
    const Workload w = build_workload(sc, programs);
    SimOptions opt;
    opt.max_closed_form_intervals = 1;
    const Timeline tl = simulate_step(sc, w, programs, opt);
    // Per data rank: recorded TP collectives, passes marked kClosedForm, passes unrecorded.
    std::map<int, std::vector<int>> n;
    for (const ActorTimeline& a : tl.actors) {
      std::vector<int>& c = n[a.data_rank];
      c.resize(3);
      for (const Interval& iv : a.intervals) {
        if (iv.kind == IntervalKind::kTpComm) c[0] += iv.tp == TpTiming::kClosedForm;
        if (iv.kind == IntervalKind::kForward || iv.kind == IntervalKind::kBackward) {
          c[1] += iv.tp == TpTiming::kClosedForm;
          c[2] += iv.tp == TpTiming::kClosedFormUnrecorded;
        }
      }
    }
    std::ostringstream out;
    for (const auto& [rank, c] : n) out << rank << ":" << c[0] << "," << c[1] << "," << c[2] << " ";
    return out.str();
  });
  // Rank 0: 2 stages x 2 micro-batches x 2 passes recorded, 2 all-reduces per layer and pass
  // (2 layers per stage) plus the embedding's one forward and the output's two forward and one
  // backward: 2 x (9 + 11); the other ranks none.
  CHECK(counts == "0:40,8,0 1:0,0,8 2:0,0,8 3:0,0,8 ");
}

TEST_CASE("a fused pass records each TP collective where its closed form put it", "[shortcuts]") {
  NvlinkSpec nvl;
  nvl.bandwidth = 100e9;
  nvl.latency = 0;
  Pass pass;
  pass.segments.resize(3);
  const auto segment = [](double compute, CollectiveOp op, double overlap, int layer) {
    Segment s;
    s.compute_s = compute;
    s.tp_bytes = 1e8;
    s.tp_op = op;
    s.overlap_s = overlap;
    s.layer = layer;
    return s;
  };
  pass.segments[0] = segment(1e-3, CollectiveOp::kAllReduce, 0, 4);         // 1.75 ms ring
  pass.segments[1] = segment(2e-3, CollectiveOp::kReduceScatter, 5e-3, 5);  // hidden
  pass.segments[2].compute_s = 1e-3;
  ClusterSpec cluster;
  cluster.nvlink = nvl;
  const FusedPass fused = fuse_pass(pass, 8, cluster);
  REQUIRE(fused.collectives.size() == 2);
  CHECK(fused.duration == Approx(1e-3 + 1.75e-3 + 2e-3 + 5e-3 + 1e-3));
  CHECK(fused.tp_exposed == Approx(1.75e-3));

  std::vector<Interval> out;
  append_fused_collectives(pass, fused, 10, 10 + fused.duration, 3, 1, &out);
  REQUIRE(out.size() == 2);
  CHECK(out[0].start == Approx(10 + 1e-3));
  CHECK(out[0].end - out[0].start == Approx(1.75e-3));
  CHECK(out[0].layer == 4);
  CHECK(out[1].start == Approx(10 + 1e-3 + 1.75e-3 + 2e-3));
  CHECK(out[1].end - out[1].start == Approx(0.875e-3));
  CHECK(out[1].op == CollectiveOp::kReduceScatter);
  CHECK(out[1].layer == 5);
  CHECK(out[1].microbatch == 3);
  CHECK(out[1].chunk == 1);
  CHECK(out[1].tp == TpTiming::kClosedForm);

  // Stretched to twice its closed form, the collectives stretch with it.
  out.clear();
  append_fused_collectives(pass, fused, 0, 2 * fused.duration, 0, 0, &out);
  CHECK(out[1].start == Approx(2 * (1e-3 + 1.75e-3 + 2e-3)));
  CHECK(out[1].end - out[1].start == Approx(1.75e-3));
}

TEST_CASE("shortcuts: replicas filling a node and TP filling two nodes are mirrored",
          "[shortcuts]") {
  const ClusterSpec c = a100_cluster(8);
  const ModelSpec m = gpt_model(8, 2048, 16, 1024, 32000);
  // t = 4: two replicas per node, whose data-parallel rings have two members in each island.
  const Shortcuts two =
      decide_shortcuts(scenario(c, m, plan(4, 2, 8, 1, 4, ScheduleKind::k1F1B)), Fidelity::kFast);
  CHECK(two.one_replica.taken);
  CHECK(two.replicas == 2);
  CHECK(two.replicas_simulated(plan(4, 2, 8, 1, 4, ScheduleKind::k1F1B)) == 2);
  CHECK_FALSE(two.mirrored_tp.taken);  // fused
  // t = 16 fills two nodes: no closed form for the pass, but tensor rank 0 mirrored.
  const Shortcuts wide =
      decide_shortcuts(scenario(c, m, plan(16, 2, 2, 1, 4, ScheduleKind::k1F1B)), Fidelity::kFast);
  CHECK_FALSE(wide.fused_tp.taken);
  CHECK(wide.mirrored_tp.taken);
  CHECK(wide.tp_fills_islands);
  CHECK(wide.one_replica.taken);
  CHECK(wide.replicas == 1);
  // Pipeline neighbours in one node: tensor rank 0's ring edges as flows, no mirror.
  PlanSpec neighbours = plan(4, 2, 8, 1, 4, ScheduleKind::k1F1B);
  neighbours.placement = {ParallelDim::kTensor, ParallelDim::kPipeline, ParallelDim::kData};
  const Shortcuts near = decide_shortcuts(scenario(c, m, neighbours), Fidelity::kFast);
  CHECK_FALSE(near.fused_tp.taken);
  CHECK(near.mirrored_tp.taken);
  CHECK_FALSE(near.tp_fills_islands);
}

namespace {

// Megatron-LM's published 462B run (Narayanan et al. 2021): t = 8, p = 16, d = 48 on 6144 H100
// GPUs, 64 micro-batches. 48 replicas x 16 stages x 128 passes would be over the activity
// limit; fast fidelity simulates one replica per stage.
Scenario gpt_462b(const std::vector<std::string>& sets = {}) {
  return load_scenario_text(R"(
cluster: dgx-h100
overrides:
  cluster.nodes: 768
model:
  name: megatron-gpt-462b
  num_layers: 96
  hidden_size: 16384
  num_attention_heads: 128
  seq_length: 4096
  vocab_size: 131072
  position_embedding: learned
  untie_embeddings_and_output_weights: true
plan:
  tensor_parallel: 8
  pipeline_parallel: 16
  data_parallel: 48
  micro_batch_size: 1
  global_batch_size: 3072
  schedule: 1f1b
  sequence_parallel: true
  recompute: none
  distributed_optimizer: true
  overlap_grad_reduce: true
  precision: bf16
  tp_comm_overlap: true
  overlap_param_gather: true
)",
                            "gpt-462b.yaml", sets);
}

// The activities one step of `sc` runs at `fidelity`, simulated in a child.
double simulated_activities(const Scenario& sc, Fidelity fidelity) {
  return std::stod(run_isolated([&]() {
    const std::vector<StageProgram> programs = build_programs(sc.plan);
    const Workload w = build_workload(sc, programs);
    SimOptions opt;
    opt.fidelity = fidelity;
    opt.record_intervals = false;
    return std::to_string(simulate_step(sc, w, programs, opt).activities);
  }));
}

double estimated_activities(const Scenario& sc, Fidelity fidelity) {
  return estimated_sim_activities(sc.plan, sc.model, sc.cluster,
                                  simulated_scope(sc.plan, decide_shortcuts(sc, fidelity)));
}

}  // namespace

TEST_CASE("activity limit: a published run is accepted in fast fidelity, refused at full",
          "[shortcuts][limits]") {
  const Scenario sc = gpt_462b();
  // Counting every replica, as full fidelity does, the step is over the limit ...
  CHECK_FALSE(
      activity_limit_issues(sc.plan, sc.model, sc.cluster, every_replica_scope(sc.plan, false))
          .empty());
  // ... but fast fidelity simulates one replica per stage, its TP collectives fused.
  const Shortcuts fast = decide_shortcuts(sc, Fidelity::kFast);
  REQUIRE(fast.one_replica.taken);
  CHECK(fast.replicas_simulated(sc.plan) == 1);
  CHECK(fast.fused_tp.taken);
  CHECK(simulation_activity_issues(sc, Fidelity::kFast).empty());
  CHECK_NOTHROW(check_simulation_activities(sc, Fidelity::kFast));
  // Twice the batch, too.
  CHECK(simulation_activity_issues(gpt_462b({"plan.global_batch_size=6144"}), Fidelity::kFast)
            .empty());
  // Full fidelity simulates all 6144 GPUs: refused, located at the file and the plan key.
  try {
    check_simulation_activities(sc, Fidelity::kFull);
    FAIL("full fidelity accepted");
  } catch (const PlanError& e) {
    CHECK(e.where().file == "gpt-462b.yaml");
    CHECK(e.where().key == "plan.num_microbatches");
    CHECK_THAT(e.message(), Catch::StartsWith("at --fidelity full, one step would run about"));
    CHECK_THAT(e.message(), Catch::Contains("pipeline_parallel × data_parallel × tensor_parallel "
                                            "actors"));
    CHECK_THAT(e.message(), Catch::Contains("more than the simulation-activity limit of "
                                            "100000000 (use fewer micro-batches or "
                                            "data-parallel replicas, or --fidelity fast)"));
  }
  // The plan search prunes with the same check: the spec overload agrees.
  CHECK(simulation_activity_issues(sc.plan, sc.model, sc.cluster, Fidelity::kFast).empty());
  CHECK_FALSE(simulation_activity_issues(sc.plan, sc.model, sc.cluster, Fidelity::kFull).empty());
}

TEST_CASE("activity limit: plans that simulate every replica are still refused when too large",
          "[shortcuts][limits]") {
  // Expert parallelism with each expert group spread over four nodes (data parallelism
  // outermost): per-pair all-to-all flows join replicas, so every replica is simulated.
  const Scenario moe =
      load_scenario(source_path("scenarios/mixtral-8x7b-dgx-h100.yaml"),
                    {"plan.global_batch_size=65536", "plan.placement=[tensor, pipeline, data]"});
  const Shortcuts s = decide_shortcuts(moe, Fidelity::kFast);
  REQUIRE_FALSE(s.one_replica.taken);
  CHECK(s.replicas_simulated(moe.plan) == moe.plan.data);
  const std::vector<SpecIssue> issues = simulation_activity_issues(moe, Fidelity::kFast);
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].keys.front() == "plan.num_microbatches");
  CHECK_THAT(issues[0].message, Catch::Contains("on each of pipeline_parallel × data_parallel "
                                                "actors, a few per layer each), more than the "
                                                "simulation-activity limit of 100000000"));
  CHECK_THROWS_AS(check_simulation_activities(moe, Fidelity::kFast), PlanError);
  // The scenario as shipped fits.
  CHECK(simulation_activity_issues(
            load_scenario(source_path("scenarios/mixtral-8x7b-dgx-h100.yaml"), {}), Fidelity::kFast)
            .empty());
  // 8192 micro-batches of the 462B run: one replica per stage fits; on a tapered fabric one
  // rank's flows no longer time its group's, no replica stands for the others, and all 48
  // are too many.
  const std::string batch = "plan.global_batch_size=393216";
  CHECK(simulation_activity_issues(gpt_462b({batch}), Fidelity::kFast).empty());
  const Scenario tapered = gpt_462b({batch, "cluster.network.oversubscription=2"});
  REQUIRE_FALSE(decide_shortcuts(tapered, Fidelity::kFast).one_replica.taken);
  CHECK_FALSE(simulation_activity_issues(tapered, Fidelity::kFast).empty());
}

TEST_CASE("activity limit: the estimate bounds the activities simulated", "[shortcuts][limits]") {
  struct Case {
    Scenario sc;
    Fidelity fidelity;
  };
  const Case cases[] = {
      {gpt_462b(), Fidelity::kFast},
      {load_scenario(source_path("scenarios/gpt3-175b-3d.yaml"), {}), Fidelity::kFast},
      {load_scenario(source_path("scenarios/mixtral-8x7b-dgx-h100.yaml"), {}), Fidelity::kFast},
      {load_scenario(source_path("scenarios/tiny.yaml"), {}), Fidelity::kFull},
  };
  for (const Case& c : cases) {
    INFO(c.sc.model.name << " at " << fidelity_name(c.fidelity));
    const double actual = simulated_activities(c.sc, c.fidelity);
    const double estimate = estimated_activities(c.sc, c.fidelity);
    INFO("estimate " << estimate << ", simulated " << actual);
    CHECK(estimate >= actual);
    // An upper bound, not a wild one (measured: 13.6x, 18.1x, 1.6x and 2.7x; claimed runs,
    // which the estimate cannot count on, save the most).
    CHECK(estimate <= 50 * actual);
  }
}
