#include "lowering/all_to_all_shortcut.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "layout/expert_ranks.h"
#include "layout/rank_map.h"

namespace trident {

namespace {

// Returns the refusal both collapses share, or nothing: sharded gradients (ZeRO-2 / ZeRO-3
// reduce-scatters and gathers over the data and expert-data groups beside every pass meet the
// collapsed flows on the NICs, where max-min gives a collapsed flow one share where its
// per-pair flows had one each; measured: fast 5-9 % above full with EP 16 over two nodes), or
// a tapered fat tree (the fabric above the NICs may bottleneck the per-pair flows). `traffic`
// names what is collapsed ("all-to-alls"), `flows` its per-pair flows.
std::optional<Shortcut> shared_nic_refusal(const Scenario& sc, const char* traffic,
                                           const char* flows) {
  if (sc.plan.shards_gradients()) {
    return Shortcut{false, fmt::format("sharded gradients (optim_grads, optim_grads_params): "
                                       "data-parallel buckets and gathers beside every pass "
                                       "share the NICs with the {}",
                                       traffic)};
  }
  const NetworkSpec& net = sc.cluster.network;
  if (net.topology != Topology::kSingleSwitch && net.oversubscription > 1) {
    return Shortcut{false, fmt::format("the fat tree is oversubscribed ({}:1): the fabric above "
                                       "the NICs may bottleneck the {}",
                                       net.oversubscription, flows)};
  }
  if (net.pod_oversubscription > 1) {
    return Shortcut{false, fmt::format("the fat tree's pods are oversubscribed ({}:1) toward the "
                                       "core: the fabric above the NICs may bottleneck the {}",
                                       net.pod_oversubscription, flows)};
  }
  if (sc.cluster.sites.count > 1) {
    return Shortcut{false, fmt::format("{} sites: the WAN links may bottleneck the {}",
                                       sc.cluster.sites.count, flows)};
  }
  if (net.topology == Topology::kRailOptimized && net.pxn) {
    return Shortcut{false, fmt::format("rail-optimized fabric with PXN: the {} to other rails "
                                       "leave through node-mates' NICs after an NVLink hop",
                                       flows)};
  }
  return std::nullopt;
}

}  // namespace

Shortcut decide_nic_all_to_all(const Scenario& sc, Fidelity fidelity) {
  if (fidelity == Fidelity::kFull) return {false, "full fidelity: one flow per rank pair"};
  const PlanSpec& plan = sc.plan;
  if (sc.model.moe() && plan.expert_parallel > 1 && plan.moe_dispatcher == MoeDispatcher::kFlex) {
    return {false, "flex dispatcher: collapsed_flex decides how its flows are lowered"};
  }
  if (!sc.model.moe() || plan.expert_parallel <= 1 ||
      plan.moe_dispatcher != MoeDispatcher::kAllToAll) {
    return {false, "no expert-parallel all-to-all"};
  }
  if (auto refusal = shared_nic_refusal(sc, "all-to-alls", "all-to-all's per-pair flows")) {
    return *refusal;
  }
  // The fewest peers a member has in other islands, over the stage's expert groups.
  const RankMap ranks(plan, sc.cluster);
  const ExpertRanks experts(ranks, plan);
  int remote = plan.expert_parallel;
  const int block = plan.expert_parallel * plan.expert_tensor();
  for (int r = 0; r < plan.tensor * plan.context * plan.data; r += block) {
    for (int etp = 0; etp < plan.expert_tensor(); ++etp) {
      const std::vector<int> g = experts.expert_group(r + etp, 0);
      for (int member : g) {
        int others = 0;
        for (int gpu : g) others += ranks.island_of(gpu) != ranks.island_of(member) ? 1 : 0;
        remote = std::min(remote, others);
      }
    }
  }
  if (remote < kNicAllToAllPeers) {
    return {false, fmt::format("a member of an expert group has {} peers in other islands (fewer "
                               "than {}): one flow per pair is cheap enough",
                               remote, kNicAllToAllPeers)};
  }
  return {true, fmt::format(
                    "every member of an expert group has at least {} peers in other islands, on "
                    "a fabric without taper: its cross-island all-to-all traffic runs as one flow "
                    "through its own NIC with the larger of its sent and received bytes (exact "
                    "without competing traffic; under contention its NIC carries one all-to-all "
                    "flow instead of one per remote peer)",
                    kNicAllToAllPeers)};
}

Shortcut decide_collapsed_flex(const Scenario& sc, Fidelity fidelity) {
  if (fidelity == Fidelity::kFull) {
    return {false, "full fidelity: one flow per pair of members the flex dispatch connects"};
  }
  const PlanSpec& plan = sc.plan;
  if (!sc.model.moe() || plan.expert_parallel <= 1 || plan.moe_dispatcher != MoeDispatcher::kFlex) {
    return {false, "no flex dispatch over more than one GPU"};
  }
  if (auto refusal =
          shared_nic_refusal(sc, "flex dispatches", "flex dispatch's per-pair RDMA flows")) {
    return *refusal;
  }
  return {true,
          "flex dispatch on a fabric without taper: each member's RDMA traffic runs as one flow "
          "through its own NIC, its NVLink traffic as one flow to the next member of its island, "
          "each with the larger of the bytes its port sends and receives (exact without "
          "competing traffic when each port's per-pair flows end together; under contention a "
          "port carries one flex flow instead of one per peer)"};
}

int expert_group_replicas(const Scenario& sc, const RankMap& ranks, bool collapsed,
                          std::string* reason) {
  const PlanSpec& plan = sc.plan;
  const ExpertRanks experts(ranks, plan);
  const int block = plan.expert_parallel * plan.expert_tensor();
  // Expert groups each inside one NVLink island: every island holds whole groups and runs the
  // same all-to-alls on its own NVLink links, whatever the flows or the routing imbalance.
  bool inside = true;
  for (int pp = 0; inside && pp < plan.pipeline; ++pp) {
    for (int first = 0; inside && first < plan.tensor * plan.context * plan.data; first += block) {
      for (int etp = 0; inside && etp < plan.expert_tensor(); ++etp) {
        const std::vector<int> g = experts.expert_group(first + etp, pp);
        for (int gpu : g) inside = inside && ranks.island_of(gpu) == ranks.island_of(g.front());
      }
    }
  }
  if (!collapsed && !inside) {
    *reason =
        "expert-parallel groups join data-parallel replicas across NVLink islands and their "
        "all-to-alls run one flow per pair (nic_all_to_all and collapsed_flex not taken): "
        "every replica is simulated";
    return 0;
  }
  // The busiest expert's load as workload/moe_ops.cc moe_busiest_expert_load gives it: any
  // load but 1 makes EP rank 0 of each group send or receive more than the others.
  const double busiest =
      plan.moe_capacity_factor > 0
          ? (plan.moe_pad_to_capacity ? plan.moe_capacity_factor
                                      : std::min(plan.moe_load_imbalance, plan.moe_capacity_factor))
          : plan.moe_load_imbalance;
  if (busiest != 1 && !inside) {
    *reason = fmt::format(
        "imbalanced routing (busiest expert {} x the mean): the islands holding EP rank 0 of "
        "each expert group see other all-to-all traffic than the rest, so every replica is "
        "simulated",
        busiest);
    return 0;
  }
  // One member of each data-parallel group per island (TP filling the islands), with the
  // expert groups inside islands or their all-to-alls collapsed through each member's NIC:
  // replica 0 stands for the rest, as for a dense plan.
  const bool one = ranks.data_groups_one_per_island();
  const int r = one ? 1 : ranks.replicas_filling_islands();
  if (r == 0) {
    *reason =
        "no set of data-parallel replicas fills the NVLink islands it touches (with NICs of its "
        "own): every replica is simulated";
    return 0;
  }
  for (int pp = 0; pp < plan.pipeline; ++pp) {
    for (int first = 0; first < plan.tensor * plan.context * plan.data; first += block) {
      for (int etp = 0; etp < plan.expert_tensor(); ++etp) {
        std::map<int, int> members;  // island -> members of the group there
        for (int gpu : experts.expert_group(first + etp, pp)) ++members[ranks.island_of(gpu)];
        for (const auto& island : members) {
          if (island.second != members.begin()->second) {
            *reason =
                "an expert group has more members in one NVLink island than in another: its "
                "islands' all-to-all flows differ, so every replica is simulated";
            return 0;
          }
        }
        // The expert weights reduce over expert-data-parallel groups (EP x ETP < t x cp x d):
        // their rings are mirrored as the dense ones are, which needs every island a group
        // touches to hold as many of its members.
        std::map<int, int> data_members;
        for (int gpu : experts.expert_data_group(first + etp, pp)) {
          ++data_members[ranks.island_of(gpu)];
        }
        for (const auto& island : data_members) {
          if (island.second != data_members.begin()->second) {
            *reason =
                "an expert-data-parallel group has more members in one NVLink island than in "
                "another: its rings are not alike, so every replica is simulated";
            return 0;
          }
        }
      }
    }
  }
  if (one) {
    *reason = std::string("replicas run identical programs and every data-parallel group has ") +
              "one member per NVLink island; " +
              (inside ? "every expert group lies inside one island, so replica 0's islands run "
                        "the same all-to-alls on their own NVLink links as every other"
                      : "routing is balanced and the expert all-to-alls are collapsed (each "
                        "member's cross-island share out through its own NIC and back), so "
                        "replica 0's islands carry the same all-to-all flows as every other") +
              "; each of its data-parallel and expert-data-parallel ring edges is mirrored "
              "through its own NIC";
    return r;
  }
  if (inside) {
    *reason = fmt::format(
        "replicas run identical programs and replicas 0..{} fill the NVLink islands they touch, "
        "with NICs of their own; every expert group lies inside one island, so each island runs "
        "the same all-to-alls on its own NVLink links: the simulated islands time the others'; "
        "their data-parallel and expert-data-parallel NVLink stages are simulated, each "
        "inter-island edge mirrored through its own NIC",
        r - 1);
    return r;
  }
  *reason = fmt::format(
      "replicas run identical programs and replicas 0..{} fill the NVLink islands they touch, "
      "with NICs of their own; every expert group has as many members in each island it spans, "
      "routing is balanced and the expert all-to-alls are collapsed (each member's cross-island "
      "share out through its own NIC and back, its in-island share to its island neighbour), "
      "so every island's all-to-all flows are alike: the simulated islands' members meet in "
      "each all-to-all and time the others'; their data-parallel and expert-data-parallel "
      "NVLink stages are simulated, each inter-island edge mirrored through its own NIC",
      r - 1);
  return r;
}

}  // namespace trident
