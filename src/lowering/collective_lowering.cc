#include "lowering/collective_lowering.h"

#include <algorithm>
#include <map>

namespace trident {
namespace {

using Rings = std::vector<std::vector<int>>;

// Splits every group by island into the rings inside islands and across them (members with the
// same local index). Requires every island of a group to hold the same number of members.
void split_by_island(const Rings& groups, const std::function<int(int)>& island_of, Rings* intra,
                     Rings* inter) {
  for (const auto& g : groups) {
    std::map<int, std::vector<int>> by_island;
    for (int gpu : g) by_island[island_of(gpu)].push_back(gpu);
    const size_t c = by_island.begin()->second.size();
    for (const auto& [isl, members] : by_island) intra->push_back(members);
    for (size_t j = 0; j < c; ++j) {
      std::vector<int> ring;
      for (const auto& [isl, members] : by_island) ring.push_back(members[j]);
      inter->push_back(ring);
    }
  }
}

// Appends one flow per ring edge of `rings` carrying `bytes` at `stage`'s efficiency to
// `phase`, or, with opt.simulated, what LoweringOptions says of the accepted GPUs.
void ring_flows(const Rings& rings, const CollectiveStage& stage, double bytes,
                const std::function<int(int)>& island_of, const LoweringOptions& opt,
                Phase* phase) {
  const ClusterSpec& c = *opt.cluster;
  const auto efficiency = [&](bool nvlink) {
    const double route = nvlink ? c.nvlink.protocol_efficiency : c.network.protocol_efficiency;
    return stage.switch_efficiency > 0 ? stage.switch_efficiency : route * stage.fraction;
  };
  const auto closed_form = [&]() {
    const double t = c.nvlink.latency + bytes / (c.nvlink.bandwidth * efficiency(true));
    phase->floor_s = std::max(phase->floor_s, t);
    phase->floor_latency = std::max(phase->floor_latency, c.nvlink.latency);
  };
  for (const auto& ring : rings) {
    const size_t n = ring.size();
    if (n < 2) continue;
    const bool inside = island_of(ring[0]) == island_of(ring[1]);
    if (opt.simulated && inside &&
        std::none_of(ring.begin(), ring.end(), [&](int m) { return opt.simulated(m); })) {
      continue;
    }
    if (opt.simulated && !inside && opt.mirror_inter) {
      for (int m : ring) {
        if (opt.simulated(m)) phase->flows.push_back({m, m, bytes, efficiency(false)});
      }
      continue;
    }
    for (size_t i = 0; i < n; ++i) {
      const int src = ring[i], dst = ring[(i + 1) % n];
      const bool nvlink = island_of(src) == island_of(dst);
      if (opt.simulated && nvlink &&
          (opt.closed_form_intra || (!opt.simulated(src) && !opt.simulated(dst)))) {
        closed_form();
      } else {
        phase->flows.push_back({src, dst, bytes, efficiency(nvlink)});
      }
    }
  }
}

}  // namespace

std::vector<Phase> lower_plan(const CollectivePlan& plan, const Rings& groups,
                              const std::function<int(int)>& island_of,
                              const LoweringOptions& opt) {
  std::vector<Phase> out;
  if (plan.stages.empty() || groups.empty()) return out;
  Rings intra, inter;
  for (const CollectiveStage& st : plan.stages) {
    if (st.rings != StageRings::kFlat && intra.empty())
      split_by_island(groups, island_of, &intra, &inter);
  }
  const auto rings_of = [&](StageRings r) -> const Rings& {
    return r == StageRings::kFlat ? groups : r == StageRings::kIntra ? intra : inter;
  };
  const std::vector<PlanPhase> phases_of_plan = plan_phases(plan);
  // Validation mode runs stages step by step when they run one after another; a pipelined
  // plan's stages stay collapsed (its chunks already interleave them).
  // Across sites NCCL's chunks pipeline through the ring (a WAN edge's latency is paid per
  // crossing, not per step: make_collective_plan), so such a ring runs collapsed even in
  // validation mode.
  const bool stepwise =
      !opt.collapse_steps && plan.sites <= 1 && (plan.chunks <= 1 || plan.stages.size() == 1);
  for (const PlanPhase& pp : phases_of_plan) {
    for (size_t j = 0; j < pp.stages.size(); ++j) {
      const CollectiveStage& st = plan.stages[pp.stages[j]];
      const double bytes = st.bytes * pp.shares[j];
      const int phases = stepwise ? st.steps : 1;
      Phase phase;
      phase.steps = phases == 1 ? st.steps : 1;
      ring_flows(rings_of(st.rings), st, bytes / phases, island_of, opt, &phase);
      phase.with_next = j + 1 < pp.stages.size();
      for (int i = 0; i < phases; ++i) out.push_back(phase);
    }
  }
  if (!out.empty()) out.front().latency = plan.latency;
  return out;
}

std::vector<Phase> lower_collective(CollectiveOp op, const Rings& groups, double bytes,
                                    const std::function<int(int)>& island_of,
                                    const LoweringOptions& opt) {
  if (groups.empty() || groups.front().size() < 2 || bytes <= 0) return {};
  CollectiveShape shape = collective_shape(groups.front(), island_of);
  shape.sites = group_sites(groups.front(), *opt.cluster);
  return lower_plan(choose_collective_plan(op, shape, bytes, *opt.cluster), groups, island_of, opt);
}

std::vector<Phase> lower_partial_data_parallel(CollectiveOp op, const Rings& groups, double bytes,
                                               int instances,
                                               const std::function<int(int)>& island_of,
                                               const LoweringOptions& opt) {
  if (instances <= 1 || groups.empty()) return lower_collective(op, groups, bytes, island_of, opt);
  const size_t slice = groups.front().size() / static_cast<size_t>(instances);
  Rings intra, inter;
  for (const std::vector<int>& g : groups) {
    for (size_t i = 0; i < g.size(); i += slice)
      intra.emplace_back(g.begin() + i, g.begin() + i + slice);
    for (size_t j = 0; j < slice; ++j) {
      std::vector<int> across;
      for (size_t i = j; i < g.size(); i += slice) across.push_back(g[i]);
      inter.push_back(std::move(across));
    }
  }
  std::vector<Phase> out = lower_collective(op, intra, bytes, island_of, opt);
  if (op != CollectiveOp::kReduceScatter) return out;
  std::vector<Phase> across =
      lower_collective(CollectiveOp::kAllReduce, inter, bytes / slice, island_of, opt);
  if (across.empty()) return out;
  if (out.empty()) return across;
  // One latency for the sequence (phase_runner.h reads the first phase's): each plan's latency
  // covers its own routes', so their sum covers both.
  out.front().latency += across.front().latency;
  across.front().latency = 0;
  out.insert(out.end(), across.begin(), across.end());
  return out;
}

std::vector<Phase> lower_mirrored(const CollectivePlan& plan, int gpu, const ClusterSpec& c) {
  if (plan.stages.empty()) return {};
  const CollectiveStage& st = plan.stages.front();
  Phase phase;
  phase.steps = st.steps;
  phase.latency = plan.latency;
  phase.flows.push_back({gpu, gpu, st.bytes, c.network.protocol_efficiency * st.fraction});
  return {phase};
}

std::vector<Phase> lower_ring_exchange(const std::vector<std::vector<int>>& rings, double bytes) {
  Phase phase;
  for (const std::vector<int>& ring : rings) {
    const size_t n = ring.size();
    for (size_t i = 0; i < n; ++i) phase.flows.push_back({ring[i], ring[(i + 1) % n], bytes});
  }
  return {phase};
}

}  // namespace trident
