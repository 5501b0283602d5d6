// Megatron-Core's expert rank layout inside one pipeline stage (megatron/core/parallel_state.py,
// initialize_model_parallel: the expert RankGenerator orders the stage's t x cp x d ranks as
// "tp-ep-dp" with tp = expert_tensor_parallel_size). The dense ranks of a stage are numbered
// r = tp + t (cp + cp_size dp) (order tp-cp-dp); the same index r is, for the experts,
// etp + ETP (ep + EP edp). So the expert groups fold the tensor, context and data-parallel
// ranks together: an expert-parallel group is EP ranks ETP apart, an expert-data-parallel
// group EDP = t cp d / (EP ETP) ranks EP ETP apart. With ETP = t and cp = 1 the EP group is EP
// consecutive data-parallel ranks of one tensor rank. Pure; no SimGrid.
#ifndef TRIDENT_LAYOUT_EXPERT_RANKS_H_
#define TRIDENT_LAYOUT_EXPERT_RANKS_H_

#include <vector>

#include "layout/rank_map.h"

namespace trident {

// Who meets in one expert collective: `participants` actors with the same `id`.
struct ExpertJoin {
  int participants = 1;
  int id = 0;
};

class ExpertRanks {
 public:
  // Requires a validated plan: EP x ETP dividing t x cp x d, and EP x ETP a multiple or a
  // divisor of t (checks.cc moe_plan_issues).
  ExpertRanks(const RankMap& ranks, const PlanSpec& plan);

  // Returns the stage-local index of (tp, cp, dp): tp + t (cp + cp_size dp).
  int local(int tp, int cp, int dp) const { return tp + t_ * (cp + cp_ * dp); }
  // Returns the GPUs of the expert-parallel group of local rank `r` in stage `pp`, in EP
  // rank order.
  std::vector<int> expert_group(int r, int pp) const;
  // Returns the GPUs of the expert-data-parallel group of local rank `r` in stage `pp`.
  std::vector<int> expert_data_group(int r, int pp) const;
  // Returns the distinct expert (or, data: expert-data) groups of local ranks
  // [first, first + width) in stage `pp`.
  std::vector<std::vector<int>> groups(int first, int width, int pp, bool data) const;
  // Returns how many actors, each standing for `width` consecutive local ranks (1: one GPU; t:
  // a TP group), meet in the expert (or, data: expert-data) collective of the actor whose first
  // local rank is `first`, and an id shared by exactly those actors within the stage.
  ExpertJoin join(int first, int width, bool data) const;

  int expert_data_parallel() const { return edp_; }

 private:
  const RankMap& ranks_;
  int t_, cp_, ep_, etp_, edp_;
  int gpu(int r, int pp) const;
};

}  // namespace trident

#endif  // TRIDENT_LAYOUT_EXPERT_RANKS_H_
