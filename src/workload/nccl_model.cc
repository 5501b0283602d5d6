#include "workload/nccl_model.h"

#include <algorithm>
#include <cmath>

namespace trident {
namespace {

int op_steps(CollectiveOp op, int n) {
  return op == CollectiveOp::kAllReduce ? 2 * (n - 1) : n - 1;
}

// ceil(log2(k)): the depth of a binary tree over k nodes.
int tree_depth(int k) {
  int d = 0;
  while ((1 << d) < k) ++d;
  return d;
}

int index(CollectiveProtocol p) { return static_cast<int>(p); }

bool hierarchical(const CollectiveShape& s) { return s.islands > 1 && s.per_island > 1; }

// The latency of a stage's route; across sites the slowest edge of a network ring is a WAN
// edge.
double route_latency(StageRings r, const ClusterSpec& c, bool crosses, int sites = 1) {
  const bool net = r == StageRings::kInter || (r == StageRings::kFlat && crosses);
  if (!net) return c.nvlink.latency;
  return c.network.latency + (sites > 1 ? c.sites.wan_latency : 0);
}

double route_bandwidth(StageRings r, const ClusterSpec& c, bool crosses) {
  const bool net = r == StageRings::kInter || (r == StageRings::kFlat && crosses);
  return net ? c.network.nic_bandwidth * c.network.protocol_efficiency
             : c.nvlink.bandwidth * c.nvlink.protocol_efficiency;
}

}  // namespace

bool algorithm_applies(CollectiveAlgorithm a, CollectiveOp op, const CollectiveShape& s,
                       const ClusterSpec& c) {
  const bool all_reduce = op == CollectiveOp::kAllReduce;
  const bool nvls = c.nvlink.in_switch_reduction_efficiency > 0;
  switch (a) {
    case CollectiveAlgorithm::kRing:
      return true;
    case CollectiveAlgorithm::kTree:
      return all_reduce && s.islands > 1 && s.per_island > 0;
    case CollectiveAlgorithm::kNvls:
      return all_reduce && nvls && s.islands == 1 && s.ranks > 1;
    case CollectiveAlgorithm::kNvlsTree:
      return all_reduce && nvls && hierarchical(s);
    case CollectiveAlgorithm::kAuto:
      return false;
  }
  return false;
}

CollectivePlan make_collective_plan(CollectiveOp op, const CollectiveShape& s, double bytes,
                                    const ClusterSpec& c, CollectiveAlgorithm a,
                                    CollectiveProtocol p) {
  const NcclSpec& nc = c.nccl;
  CollectivePlan plan;
  plan.algorithm = a;
  plan.protocol = a == CollectiveAlgorithm::kNvls || a == CollectiveAlgorithm::kNvlsTree
                      ? CollectiveProtocol::kSimple
                      : p;
  const int pi = index(plan.protocol);
  const double frac = nc.bandwidth[pi];
  const double step = nc.step_latency[pi];
  const double lat_nv = c.nvlink.latency + step, lat_net = c.network.latency + step;
  const int n = s.ranks, k = s.islands, cpi = s.per_island;
  const double nvls_eff = c.nvlink.in_switch_reduction_efficiency;
  plan.crosses = k > 1;
  plan.sites = std::max(1, s.sites);
  // Across sites (NCCL's cross-datacenter branch, NVIDIA/nccl "cross-dc": rings join a site's
  // nodes first and cross to the next site once per channel; trees are built per site with
  // their roots chained): a chunk going round a ring of k islands crosses the WAN S times per
  // lap, so `inter` inter-island steps cross it inter * S / k times; a tree's chain of site
  // roots 2 (S - 1) times, up and down.
  const int sites = plan.sites;
  const double wan = sites > 1 ? c.sites.wan_latency : 0;
  const auto ring_wan = [&](int inter, int islands) {
    return islands > 1 ? inter * double(sites) / islands * wan : 0.0;
  };
  const double tree_wan = 2.0 * (sites - 1) * wan;
  if (n < 2 || bytes <= 0) return plan;
  switch (a) {
    case CollectiveAlgorithm::kAuto:
    case CollectiveAlgorithm::kRing: {
      // tuning.cc: baseLat + (nsteps - nInterSteps) * intraLat + nInterSteps * interLat.
      const int steps = op_steps(op, n), inter = k > 1 ? op_steps(op, k) : 0;
      plan.latency =
          nc.base_latency[pi] + (steps - inter) * lat_nv + inter * lat_net + ring_wan(inter, k);
      if (!hierarchical(s)) {
        plan.stages.push_back({StageRings::kFlat, steps, bytes / n * steps, frac, 0});
        break;
      }
      // Reduce-scatter inside islands, the inter-island ring on 1/c of the data, all-gather
      // inside; NCCL's rings cross islands once per channel and island, which moves the same
      // bytes over the NICs when every GPU drives a NIC of its own.
      const CollectiveStage intra{StageRings::kIntra, cpi - 1, bytes / cpi * (cpi - 1), frac, 0};
      const int ks = op_steps(op, k);
      const CollectiveStage across{StageRings::kInter, ks, bytes / (double(cpi) * k) * ks, frac, 0};
      if (op != CollectiveOp::kAllGather) plan.stages.push_back(intra);
      plan.stages.push_back(across);
      if (op != CollectiveOp::kReduceScatter) plan.stages.push_back(intra);
      break;
    }
    case CollectiveAlgorithm::kTree: {
      // tuning.cc: baseLat + 2 * ((nRanks/nNodes - 1) * intraLat + log2(nNodes) * interLat).
      // A chain inside the island (each member forwards the whole buffer up, then down) and a
      // double binary tree across islands on 1/c of it at tree_bandwidth. Up the trees and down
      // again, a node's NIC carries 2(k-1)/k of that each way: all of it between two nodes (the
      // child sends, the root answers), twice it at an interior node of a large tree.
      const int depth = tree_depth(k);
      plan.latency = nc.base_latency[pi] + 2 * ((cpi - 1) * lat_nv + depth * lat_net) + tree_wan;
      const CollectiveStage chain{StageRings::kIntra, cpi - 1, bytes, frac, 0};
      if (cpi > 1) plan.stages.push_back(chain);
      plan.stages.push_back({cpi > 1 ? StageRings::kInter : StageRings::kFlat, 2 * depth,
                             2.0 * (k - 1) / k * bytes / cpi, frac * nc.tree_bandwidth, 0});
      if (cpi > 1) plan.stages.push_back(chain);
      break;
    }
    case CollectiveAlgorithm::kNvls:
      // Up to the switch and back: each GPU's link carries the buffer once each way.
      plan.latency = nc.nvls_latency + c.nvlink.latency;
      plan.stages.push_back({StageRings::kFlat, 1, bytes, 1, nvls_eff});
      break;
    case CollectiveAlgorithm::kNvlsTree: {
      // NVLS reduce-scatter in the island (S up, S/c down per GPU), the tree across islands on
      // 1/c, NVLS all-gather (S/c up, S down): each NVLS stage moves (S + S/c) / 2 each way.
      const int depth = tree_depth(k);
      plan.latency = nc.nvls_latency + 2 * c.nvlink.latency + 2 * depth * lat_net + tree_wan;
      const CollectiveStage in_switch{StageRings::kIntra, 1, bytes * (1 + 1.0 / cpi) / 2, 1,
                                      nvls_eff};
      plan.stages.push_back(in_switch);
      plan.stages.push_back({StageRings::kInter, 2 * depth, 2.0 * (k - 1) / k * bytes / cpi,
                             frac * nc.tree_bandwidth, 0});
      plan.stages.push_back(in_switch);
      break;
    }
  }
  if (plan.stages.size() > 1) {
    const double chunks = std::ceil(bytes / nc.pipeline_chunk);
    plan.chunks = static_cast<int>(std::clamp(chunks, 1.0, 64.0));
  }
  return plan;
}

CollectivePlan choose_collective_plan(CollectiveOp op, const CollectiveShape& s, double bytes,
                                      const ClusterSpec& c) {
  std::vector<CollectiveAlgorithm> algos;
  if (c.nccl.algorithm != CollectiveAlgorithm::kAuto &&
      algorithm_applies(c.nccl.algorithm, op, s, c)) {
    algos = {c.nccl.algorithm};
  } else if (c.nccl.algorithm != CollectiveAlgorithm::kAuto) {
    algos = {CollectiveAlgorithm::kRing};
  } else {
    for (CollectiveAlgorithm a : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kTree,
                                  CollectiveAlgorithm::kNvls, CollectiveAlgorithm::kNvlsTree}) {
      if (algorithm_applies(a, op, s, c)) algos.push_back(a);
    }
  }
  std::vector<CollectiveProtocol> protos = {CollectiveProtocol::kSimple, CollectiveProtocol::kLL128,
                                            CollectiveProtocol::kLL};
  if (c.nccl.protocol != CollectiveProtocol::kAuto) protos = {c.nccl.protocol};
  CollectivePlan best;
  double best_time = -1;
  for (CollectiveAlgorithm a : algos) {
    for (CollectiveProtocol p : protos) {
      CollectivePlan plan = make_collective_plan(op, s, bytes, c, a, p);
      const double t = collective_plan_time(plan, c);
      if (best_time < 0 || t < best_time) {
        best = std::move(plan);
        best_time = t;
      }
    }
  }
  return best;
}

std::vector<PlanPhase> plan_phases(const CollectivePlan& plan) {
  std::vector<PlanPhase> out;
  const int q = static_cast<int>(plan.stages.size());
  if (q == 1 || plan.chunks <= 1) {
    for (int i = 0; i < q; ++i) out.push_back({{i}, {1.0}});
    return out;
  }
  const double m = plan.chunks, last = q - 1;
  out.push_back({{0}, {1 / m}});
  PlanPhase body;
  for (int i = 0; i < q; ++i) {
    body.stages.push_back(i);
    body.shares.push_back(i == 0 || i == last ? (m - 1) / m : 1.0);
  }
  out.push_back(body);
  out.push_back({{q - 1}, {1 / m}});
  return out;
}

double collective_plan_time(const CollectivePlan& plan, const ClusterSpec& c, bool collapse_steps) {
  const bool crosses = plan.crosses;
  double routes = 0, rest = 0;
  const std::vector<PlanPhase> phases = plan_phases(plan);
  const bool stepwise =
      !collapse_steps && plan.sites <= 1 && (plan.chunks <= 1 || plan.stages.size() == 1);
  for (const PlanPhase& ph : phases) {
    // Stages on the same rings share their links: their bytes add up.
    double busy[3] = {0, 0, 0}, lat[3] = {0, 0, 0};
    bool used[3] = {false, false, false};
    for (size_t j = 0; j < ph.stages.size(); ++j) {
      const CollectiveStage& st = plan.stages[ph.stages[j]];
      const int r = static_cast<int>(st.rings);
      const double bw = st.switch_efficiency > 0
                            ? c.nvlink.bandwidth * st.switch_efficiency
                            : route_bandwidth(st.rings, c, crosses) * st.fraction;
      busy[r] += st.bytes * ph.shares[j] / bw;
      const int hops = stepwise ? st.steps : 1;
      lat[r] = std::max(lat[r], hops * route_latency(st.rings, c, crosses, plan.sites));
      used[r] = true;
    }
    double latest = 0;
    for (int r = 0; r < 3; ++r) latest = std::max(latest, lat[r]);
    // Beyond the phase's largest route latency (written so that a lone stage adds its
    // bandwidth time exactly).
    double beyond = 0;
    for (int r = 0; r < 3; ++r) {
      if (used[r]) beyond = std::max(beyond, busy[r] - (latest - lat[r]));
    }
    routes += latest;
    rest += beyond;
  }
  return std::max(plan.latency, routes) + rest;
}

int group_sites(const std::vector<int>& group, const ClusterSpec& c) {
  if (c.sites.count <= 1) return 1;
  std::vector<char> seen(static_cast<size_t>(c.sites.count), 0);
  int n = 0;
  for (int gpu : group) {
    char& s = seen[static_cast<size_t>(c.site_of_gpu(gpu))];
    n += s == 0;
    s = 1;
  }
  return std::max(1, n);
}

double bus_bandwidth_factor(CollectiveOp op, int n) {
  if (n < 2) return 0;
  return op == CollectiveOp::kAllReduce ? 2.0 * (n - 1) / n : double(n - 1) / n;
}

}  // namespace trident
