#include "lowering/straggler_shortcuts.h"

#include <algorithm>
#include <set>
#include <string>

namespace trident {
namespace {

// The data ranks of the plan's slow GPUs.
std::set<int> slow_data_ranks(const Scenario& sc, const RankMap& ranks) {
  const std::vector<int> slow = slow_gpus(sc.cluster.stragglers, ranks.gpus_spanned());
  std::set<int> out;
  if (slow.empty()) return out;
  for (int pp = 0; pp < sc.plan.pipeline; ++pp) {
    for (int dp = 0; dp < sc.plan.data; ++dp) {
      for (int cp = 0; cp < sc.plan.context; ++cp) {
        for (int tp = 0; tp < sc.plan.tensor; ++tp) {
          if (std::binary_search(slow.begin(), slow.end(), ranks.gpu(tp, cp, dp, pp))) {
            out.insert(dp);
          }
        }
      }
    }
  }
  return out;
}

}  // namespace

void decide_straggler_shortcuts(const Scenario& sc, const RankMap& ranks, Shortcuts* s) {
  const StragglerSpec& st = sc.cluster.stragglers;
  if (s->fidelity == Fidelity::kFull || !has_stragglers(sc.cluster)) return;
  if (st.nvlink_fraction < 1 || st.nic_fraction < 1) {
    const std::string why = "a degraded NVLink or NIC (cluster.stragglers) makes ranks unlike";
    if (s->one_rank_flows.taken) s->one_rank_flows = {false, why};
    if (s->mirrored_tp.taken) s->mirrored_tp = {false, why};
    if (s->one_replica.taken) s->one_replica = {false, why};
    if (s->nic_all_to_all.taken) s->nic_all_to_all = {false, why};
    if (s->collapsed_flex.taken) s->collapsed_flex = {false, why};
    s->replicas = 1;
    if (s->fused_tp.taken && st.nvlink_fraction < 1) {
      s->fused_tp.reason +=
          "; the TP group holding the degraded NVLink is timed at its bandwidth (a ring or "
          "in-switch reduction runs at its slowest link)";
    }
  }
  if (st.gpu_clock_fraction < 1) {
    if (s->group_actor.taken && sc.plan.tensor > 1) {
      s->group_actor.reason +=
          "; a TP group with a slow GPU runs at its clock (its GPUs meet at every TP "
          "collective)";
    }
    if (s->one_replica.taken) {
      const std::set<int> data_ranks = slow_data_ranks(sc, ranks);
      std::set<int> blocks;
      for (int dp : data_ranks) blocks.insert(dp / s->replicas);
      if (blocks.size() > 1) {
        s->one_replica = {false,
                          "slow GPUs (cluster.stragglers) in replicas that no one simulated set "
                          "of replicas holds: each replica's pace differs"};
        s->replicas = 1;
      } else if (!blocks.empty()) {
        s->one_replica.reason +=
            "; the simulated replicas stand for those holding the slow GPUs (data rank " +
            std::to_string(*data_ranks.begin()) +
            "), which every data-parallel collective waits for";
      }
    }
  }
}

StragglerActors::StragglerActors(const Scenario& sc, const RankMap& ranks,
                                 const Shortcuts& shortcuts)
    : ranks_(ranks),
      t_(sc.plan.tensor),
      d_(sc.plan.data),
      replicas_(shortcuts.replicas_simulated(sc.plan)),
      group_(shortcuts.group_actor.taken),
      replica_(shortcuts.one_replica.taken) {
  const StragglerSpec& st = sc.cluster.stragglers;
  clock_.assign(ranks.gpus_spanned(), 1.0);
  for (int gpu : slow_gpus(st, ranks.gpus_spanned())) {
    if (gpu < static_cast<int>(clock_.size())) clock_[gpu] = st.gpu_clock_fraction;
  }
  if (st.nvlink_fraction < 1) nvlink_gpu_ = st.nvlink_rank;
}

std::vector<int> StragglerActors::gpus_of(int tp, int cp, int dp, int pp) const {
  std::vector<int> out;
  for (int r = group_ ? 0 : tp; r < (group_ ? t_ : tp + 1); ++r) {
    // Replica dp stands for dp, dp + R, dp + 2R, ... (its place in every block of R).
    for (int q = dp; q < (replica_ ? d_ : dp + 1); q += replicas_) {
      out.push_back(ranks_.gpu(r, cp, q, pp));
    }
  }
  return out;
}

double StragglerActors::clock_fraction(int tp, int cp, int dp, int pp) const {
  double f = 1;
  for (int gpu : gpus_of(tp, cp, dp, pp)) f = std::min(f, clock_[gpu]);
  return f;
}

bool StragglerActors::degraded_nvlink(int tp, int cp, int dp, int pp) const {
  if (nvlink_gpu_ < 0) return false;
  for (int r = 0; r < t_; ++r) {
    if (ranks_.gpu(r, cp, dp, pp) == nvlink_gpu_) return true;
  }
  (void)tp;
  return false;
}

}  // namespace trident
