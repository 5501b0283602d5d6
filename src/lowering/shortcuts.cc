#include "lowering/shortcuts.h"

#include <fmt/format.h>

#include "core/errors.h"
#include "layout/rail_alignment.h"
#include "layout/rank_map.h"
#include "lowering/all_to_all_shortcut.h"
#include "lowering/straggler_shortcuts.h"

namespace trident {
namespace {

Shortcut on(std::string reason) { return {true, std::move(reason)}; }
Shortcut off(std::string reason) { return {false, std::move(reason)}; }

// True when MoE layers run dispatch and combine collectives over expert-parallel groups, which
// span data-parallel replicas and share the GPUs' links with everything else, or their experts'
// gradients reduce over groups of their own (ETP != t: across TP ranks and replicas).
bool expert_parallel(const PlanSpec& plan, const ModelSpec& model) {
  return model.moe() && (plan.expert_parallel > 1 || plan.expert_tensor() != plan.tensor);
}

Shortcut decide_fused_tp(const PlanSpec& plan, const RankMap& ranks, bool ep) {
  if (ep) {
    return off(
        "expert-parallel all-to-alls run inside the passes: they are simulated as flows, so "
        "the passes are too");
  }
  if (plan.tensor == 1) return on("no tensor parallelism (t = 1): there is no TP collective");
  if (!ranks.tensor_groups_in_islands()) {
    return off("a TP group spans NVLink islands: its collectives cross the network");
  }
  if (!ranks.tensor_traffic_isolated()) {
    return off(
        "pipeline neighbours share an NVLink island: their transfers meet the TP "
        "collectives on NVLink");
  }
  // Parameter gathers and sharded-gradient reductions run beside every pass, overlapped
  // gradient buckets beside the last micro-batch's backward; inside an island they share
  // NVLink with the TP collectives.
  const bool dp_beside_passes =
      plan.data_context() > 1 &&
      (plan.shards_gradients() || plan.overlap_param_gather || plan.overlap_grad_reduce);
  if (dp_beside_passes && !ranks.data_groups_one_per_island()) {
    return off(
        "data-parallel gathers or reductions run beside the passes (sharded data parallelism, "
        "overlap_param_gather, overlap_grad_reduce) and a data-parallel group has several "
        "members in one NVLink island: they meet the TP collectives on NVLink");
  }
  if (plan.context > 1) {
    return on(
        "every TP group sits in one NVLink island and no pipeline transfer uses its links; "
        "context-parallel ring steps start only once every CP rank has finished its "
        "preceding collectives: TP collectives meet no other traffic, so the closed form is "
        "exact (the ring itself is simulated)");
  }
  return on(
      "every TP group sits in one NVLink island and no pipeline transfer uses its "
      "links: its collectives meet no other traffic, so the closed form is exact");
}

Shortcut decide_one_rank_flows(const ClusterSpec& c, const RankMap& ranks) {
  if (!ranks.tensor_ranks_on_distinct_nics()) {
    return off("GPUs of a TP group share a NIC: their pipeline and data-parallel flows compete");
  }
  const NetworkSpec& net = c.network;
  if (net.topology != Topology::kSingleSwitch && net.oversubscription > 1) {
    return off(
        fmt::format("the fat tree is oversubscribed ({}:1): the fabric above the NICs "
                    "may bottleneck the TP ranks' flows together",
                    net.oversubscription));
  }
  if (net.pod_oversubscription > 1) {
    return off(
        fmt::format("the fat tree's pods are oversubscribed ({}:1) toward the core: the "
                    "fabric above the NICs may bottleneck the TP ranks' flows together",
                    net.pod_oversubscription));
  }
  if (c.site_of_gpu(0) != c.site_of_gpu(ranks.gpus_spanned() - 1)) {
    return off(fmt::format(
        "the plan spans {} sites: every flow between them shares its sites' WAN links, so "
        "the TP ranks' flows and the replicas' meet there",
        c.site_of_gpu(ranks.gpus_spanned() - 1) - c.site_of_gpu(0) + 1));
  }
  return on(
      "the ranks of a TP group reach the network through pairwise different NICs and "
      "the fabric above them has no taper: each rank's identical flows run on links of "
      "their own");
}

Shortcut decide_mirrored_tp(const PlanSpec& plan, const Shortcut& fused_tp,
                            const Shortcut& one_rank_flows, bool fills_islands, bool ep) {
  if (plan.tensor == 1 || fused_tp.taken) return off("TP collectives are fused (or absent)");
  if (!one_rank_flows.taken) return off("needs one_rank_flows (one rank's flows time the group)");
  if (ep) {
    return off(
        "expert-parallel all-to-alls may run between the tensor ranks' GPUs: every TP edge "
        "may meet them");
  }
  if (fills_islands) {
    return on(
        "every TP group fills the islands it spans, so only its own stages use their NVLink "
        "(closed form), and its ranks reach the network through NICs of their own, each "
        "carrying the same flows: tensor rank 0's inter-island edge, out through its NIC and "
        "back, times every rank's");
  }
  return on(
      "only tensor rank 0's pipeline and data-parallel flows are simulated (one_rank_flows): "
      "TP ring edges from or to it run as flows, the NVLink edges between other ranks meet "
      "no simulated traffic and take their closed form");
}

// Sets s->one_replica and s->replicas.
void decide_one_replica(const Scenario& sc, const RankMap& ranks, bool ep, Shortcuts* s) {
  const PlanSpec& plan = sc.plan;
  s->replicas = 1;
  if (!s->one_rank_flows.taken) {
    s->one_replica = off("needs one_rank_flows (one rank's flows time the group)");
    return;
  }
  if (plan.distributed_optimizer_instances > 1) {
    s->one_replica = off(fmt::format(
        "{} distributed-optimizer copies: their gradients cross between replicas in two "
        "collectives of different groups (inside a copy, then across copies)",
        plan.distributed_optimizer_instances));
    return;
  }
  if (ep) {
    // The expert groups span replicas: whole islands of replicas stand for the rest when every
    // island's all-to-all flows are alike (lowering/all_to_all_shortcut.h).
    std::string why;
    const int r =
        expert_group_replicas(sc, ranks, s->nic_all_to_all.taken || s->collapsed_flex.taken, &why);
    if (r == 0) {
      s->one_replica = off(why);
      return;
    }
    s->replicas = r;
    s->one_replica = on(why);
    return;
  }
  if (plan.data == 1) {
    s->one_replica = off("one data-parallel replica (d = 1): nothing to mirror");
    return;
  }
  if (!ranks.data_groups_one_per_island()) {
    const int r = ranks.replicas_filling_islands();
    if (r == 0) {
      s->one_replica =
          off("a data-parallel group has several members in one NVLink island and no set of "
              "replicas fills the islands it touches: its ring edges are not all alike");
      return;
    }
    s->replicas = r;
    s->one_replica = on(fmt::format(
        "replicas run identical programs and replicas 0..{} hold every member their data "
        "x context groups have in the islands they use, every island alike: their NVLink "
        "stages are simulated, each inter-island edge mirrored through its own NIC",
        r - 1));
    return;
  }
  if (plan.context > 1) {
    s->one_replica =
        on("replicas run identical programs and every data x context ring edge is one "
           "NIC-to-NIC flow (one member per island): replica 0's context ranks are simulated, "
           "each edge carries their load");
    return;
  }
  s->one_replica =
      on("replicas run identical programs and every data-parallel ring edge is one "
         "NIC-to-NIC flow (one replica per island): each edge carries replica 0's load");
}

// The plan fields decide_shortcuts (and the rank map, expert ranks and all-to-all decisions it
// uses) reads: plans with the same key take the same shortcuts on one model and cluster.
std::vector<int> shortcut_key(const PlanSpec& p) {
  std::vector<int> key = {p.tensor,
                          p.context,
                          p.pipeline,
                          p.data,
                          p.gpus_per_island,
                          p.expert_parallel,
                          p.expert_tensor(),
                          static_cast<int>(p.moe_dispatcher),
                          static_cast<int>(p.dp_sharding),
                          p.overlap_param_gather ? 1 : 0,
                          p.overlap_grad_reduce ? 1 : 0,
                          p.distributed_optimizer_instances};
  for (ParallelDim d : p.placement) key.push_back(static_cast<int>(d));
  return key;
}

}  // namespace

const char* fidelity_name(Fidelity f) { return f == Fidelity::kFull ? "full" : "fast"; }

bool parse_fidelity(const std::string& name, Fidelity* out) {
  if (name == "fast") {
    *out = Fidelity::kFast;
  } else if (name == "full") {
    *out = Fidelity::kFull;
  } else {
    return false;
  }
  return true;
}

Shortcuts decide_shortcuts(const Scenario& sc, Fidelity fidelity) {
  if (fidelity == Fidelity::kFull) return decide_shortcuts(sc, fidelity, nullptr);
  const RankMap ranks(sc.plan, sc.cluster);
  return decide_shortcuts(sc, fidelity, &ranks);
}

Shortcuts decide_shortcuts(const Scenario& sc, Fidelity fidelity, const RankMap* rank_map) {
  Shortcuts s;
  s.fidelity = fidelity;
  s.nic_all_to_all = decide_nic_all_to_all(sc, fidelity);
  s.collapsed_flex = decide_collapsed_flex(sc, fidelity);
  if (fidelity == Fidelity::kFull) {
    const std::string why = "full fidelity: one actor per GPU, every ring step simulated";
    s.group_actor = s.fused_tp = s.one_rank_flows = s.mirrored_tp = s.one_replica =
        s.collapsed_steps = s.claimed_runs = off(why);
    return s;
  }
  const RankMap& ranks = *rank_map;
  s.group_actor =
      on("the GPUs of a TP group run identical programs; their collectives and "
         "transfers still move every GPU's bytes");
  s.fused_tp = decide_fused_tp(sc.plan, ranks, expert_parallel(sc.plan, sc.model));
  s.one_rank_flows = decide_one_rank_flows(sc.cluster, ranks);
  const bool rails_pxn =
      sc.cluster.network.topology == Topology::kRailOptimized && sc.cluster.network.pxn;
  if (!transfers_stay_on_rails(sc.cluster, ranks) ||
      (rails_pxn && expert_parallel(sc.plan, sc.model))) {
    // PXN moves another rail's transfers over the sender's NVLink and a node-mate's NIC.
    const std::string why =
        "rail-optimized fabric with PXN and peers on other rails (or expert-parallel "
        "all-to-alls): their transfers cross the TP ranks' NVLink and each other's NICs";
    if (s.fused_tp.taken && sc.plan.tensor > 1) s.fused_tp = off(why);
    s.one_rank_flows = off(why);
  }
  s.tp_fills_islands = ranks.tensor_groups_fill_islands();
  s.mirrored_tp = decide_mirrored_tp(sc.plan, s.fused_tp, s.one_rank_flows, s.tp_fills_islands,
                                     expert_parallel(sc.plan, sc.model));
  decide_one_replica(sc, ranks, expert_parallel(sc.plan, sc.model), &s);
  decide_straggler_shortcuts(sc, ranks, &s);
  s.collapsed_steps =
      on("identical consecutive ring steps run as one flow per edge with "
         "their bytes and latencies: exact without competing traffic; under "
         "contention one step's bytes spread over the phase");
  s.claimed_runs =
      on("pipeline transfers, and passes of compute and TP collectives, whose flows find their "
         "links free are timed in closed form (a flow alone on its route gets the route's "
         "bandwidth); such runs meeting through flows that are alone in their groups are timed "
         "together (max-min fluid sharing of those flows); a flow on those links while their "
         "windows are open, or any other overlap, turns what is left back into flows at that "
         "instant");
  return s;
}

SimulatedScope simulated_scope(const PlanSpec& plan, const Shortcuts& s) {
  if (s.fidelity == Fidelity::kFull) return every_replica_scope(plan, true);
  SimulatedScope scope;
  scope.replicas = s.replicas_simulated(plan);
  scope.fused_tp = s.fused_tp.taken;
  scope.mirrored_tp = s.mirrored_tp.taken;
  scope.collapsed_all_to_all = s.nic_all_to_all.taken || s.collapsed_flex.taken;
  return scope;
}

SimulatedScope fewest_activities_scope(const PlanSpec& plan, const ModelSpec& model) {
  if (expert_parallel(plan, model)) {
    SimulatedScope every = every_replica_scope(plan, false);
    every.collapsed_all_to_all = true;
    return every;
  }
  SimulatedScope scope;
  scope.replicas = 1;
  scope.fused_tp = true;
  scope.mirrored_tp = true;
  return scope;
}

namespace {

// The scenario decide_shortcuts reads, of a plan on a model and cluster.
Scenario scenario_of(const PlanSpec& plan, const ModelSpec& model, const ClusterSpec& cluster) {
  Scenario sc;
  sc.plan = plan;
  sc.model = model;
  sc.cluster = cluster;
  return sc;
}

// The activity limit's issue of `plan`: every replica unfused bounds every fast step, so the
// shortcuts (fast_scope, called only then) are decided only for a plan above the limit there.
template <typename FastScope>
std::vector<SpecIssue> activity_issues(const PlanSpec& plan, const ModelSpec& model,
                                       const ClusterSpec& cluster, Fidelity fidelity,
                                       FastScope fast_scope) {
  const bool full = fidelity == Fidelity::kFull;
  std::vector<SpecIssue> issues =
      activity_limit_issues(plan, model, cluster, every_replica_scope(plan, full));
  if (issues.empty() || full) return issues;
  return activity_limit_issues(plan, model, cluster, fast_scope());
}

}  // namespace

std::vector<SpecIssue> simulation_activity_issues(const Scenario& sc, Fidelity fidelity) {
  return activity_issues(sc.plan, sc.model, sc.cluster, fidelity,
                         [&] { return simulated_scope(sc.plan, decide_shortcuts(sc, fidelity)); });
}

std::vector<SpecIssue> simulation_activity_issues(const PlanSpec& plan, const ModelSpec& model,
                                                  const ClusterSpec& cluster, Fidelity fidelity,
                                                  ScopeMemo* memo) {
  return activity_issues(plan, model, cluster, fidelity, [&] {
    if (memo != nullptr) return memo->fast_scope(plan, model, cluster);
    // Copied only for a plan that may be too large.
    return simulated_scope(plan, decide_shortcuts(scenario_of(plan, model, cluster), fidelity));
  });
}

const SimulatedScope& ScopeMemo::fast_scope(const PlanSpec& plan, const ModelSpec& model,
                                            const ClusterSpec& cluster) {
  const std::vector<int> key = shortcut_key(plan);
  auto it = scopes_.find(key);
  if (it == scopes_.end()) {
    const Scenario sc = scenario_of(plan, model, cluster);
    // Plans that differ only in fields the rank map does not read share its predicates.
    std::vector<int> layout = {plan.tensor, plan.context, plan.pipeline, plan.data,
                               plan.gpus_per_island};
    for (ParallelDim d : plan.placement) layout.push_back(static_cast<int>(d));
    auto r = ranks_.find(layout);
    if (r == ranks_.end()) r = ranks_.emplace(layout, RankMap(plan, cluster)).first;
    it = scopes_
             .emplace(key, simulated_scope(plan, decide_shortcuts(sc, Fidelity::kFast, &r->second)))
             .first;
  }
  return it->second;
}

void check_simulation_activities(const Scenario& sc, Fidelity fidelity) {
  for (const SpecIssue& i : simulation_activity_issues(sc, fidelity)) {
    throw PlanError(SourceLocation{sc.path, 0, 0, i.keys.front()},
                    (fidelity == Fidelity::kFull ? "at --fidelity full, " : "") + i.message);
  }
}

std::vector<std::pair<const char*, const Shortcut*>> named_shortcuts(const Shortcuts& s) {
  return {{"group_actor", &s.group_actor},       {"fused_tp", &s.fused_tp},
          {"one_rank_flows", &s.one_rank_flows}, {"mirrored_tp", &s.mirrored_tp},
          {"one_replica", &s.one_replica},       {"collapsed_steps", &s.collapsed_steps},
          {"nic_all_to_all", &s.nic_all_to_all}, {"collapsed_flex", &s.collapsed_flex},
          {"claimed_runs", &s.claimed_runs}};
}

}  // namespace trident
