#include "layout/expert_ranks.h"

#include <algorithm>

namespace trident {

ExpertRanks::ExpertRanks(const RankMap& ranks, const PlanSpec& plan)
    : ranks_(ranks),
      t_(plan.tensor),
      cp_(plan.context),
      ep_(plan.expert_parallel),
      etp_(plan.expert_tensor()),
      edp_(plan.expert_data_parallel()) {}

int ExpertRanks::gpu(int r, int pp) const {
  return ranks_.gpu(r % t_, (r / t_) % cp_, r / (t_ * cp_), pp);
}

std::vector<int> ExpertRanks::expert_group(int r, int pp) const {
  const int etp = r % etp_, edp = r / (etp_ * ep_);
  std::vector<int> out;
  for (int j = 0; j < ep_; ++j) out.push_back(gpu(etp + etp_ * (j + ep_ * edp), pp));
  return out;
}

std::vector<int> ExpertRanks::expert_data_group(int r, int pp) const {
  const int block = etp_ * ep_, first = r % block;
  std::vector<int> out;
  for (int k = 0; k < edp_; ++k) out.push_back(gpu(first + block * k, pp));
  return out;
}

std::vector<std::vector<int>> ExpertRanks::groups(int first, int width, int pp, bool data) const {
  std::vector<std::vector<int>> out;
  for (int r = first; r < first + width; ++r) {
    std::vector<int> g = data ? expert_data_group(r, pp) : expert_group(r, pp);
    if (std::find(out.begin(), out.end(), g) == out.end()) out.push_back(std::move(g));
  }
  return out;
}

ExpertJoin ExpertRanks::join(int first, int width, bool data) const {
  // An expert-parallel group lies in one block of EP x ETP consecutive local ranks; an
  // expert-data-parallel group takes one rank of every block.
  const int block = etp_ * ep_;
  if (width == 1) {
    return data ? ExpertJoin{edp_, first % block}
                : ExpertJoin{ep_, first / block * etp_ + first % etp_};
  }
  if (block <= width) {  // the actor holds whole blocks (width a multiple of the block)
    return data ? ExpertJoin{edp_ * block / width, 0}  // every actor of the stage
                : ExpertJoin{1, first / width};
  }
  const int per_block = block / width;  // the block a multiple of width
  return data ? ExpertJoin{edp_, (first / width) % per_block}
              : ExpertJoin{per_block, first / block};
}

}  // namespace trident
