#include "lowering/param_gathers.h"

#include <algorithm>

namespace trident {

namespace {

// The buckets of `backward`'s dense (or expert) gradients as Megatron-Core closes them, in
// backward order (last layers first), returned in forward order.
std::vector<double> chunk_buckets(const Pass& backward, bool expert, double bucket_params) {
  std::vector<double> buckets;
  double open = 0;
  for (const Segment& seg : backward.segments) {
    const double params = expert ? seg.expert_grad_params : seg.grad_params;
    if (params <= 0) continue;
    open += params;
    if (open >= bucket_params) {
      buckets.push_back(open);
      open = 0;
    }
  }
  if (open > 0) buckets.push_back(open);
  std::reverse(buckets.begin(), buckets.end());
  return buckets;
}

// For each segment of `forward`: the bucket holding the end of the dense (or expert) weights
// it is the first to use (-1: it uses none first).
std::vector<int> bucket_needs(const Pass& forward, bool expert,
                              const std::vector<double>& buckets) {
  // Bucket j covers forward parameters [starts[j], starts[j] + buckets[j]).
  std::vector<double> starts;
  double total = 0;
  for (double b : buckets) {
    starts.push_back(total);
    total += b;
  }
  std::vector<int> needs;
  double used = 0;
  for (const Segment& seg : forward.segments) {
    const double params = expert ? seg.expert_weight_params : seg.weight_params;
    if (params <= 0 || buckets.empty()) {
      needs.push_back(-1);
      continue;
    }
    used += params;
    // The last bucket starting below the end of this segment's parameters (a relative
    // tolerance: the sums run in opposite orders).
    int j = 0;
    while (j + 1 < static_cast<int>(starts.size()) && starts[j + 1] < used * (1 - 1e-12)) ++j;
    needs.push_back(j);
  }
  return needs;
}

}  // namespace

GatherSchedule bucket_gathers(const StageWork& st, double bucket_params) {
  GatherSchedule out;
  for (const ChunkWork& ch : st.chunks) {
    // Dense buckets over the data-parallel group; expert buckets (their own buffer in
    // Megatron-Core's DDP) over the expert-data-parallel group, for the experts the forward
    // marks as gathered.
    const std::vector<double> dense = chunk_buckets(ch.backward, false, bucket_params);
    std::vector<double> experts;
    for (const Segment& seg : ch.forward.segments) {
      if (seg.expert_weight_params > 0) {
        experts = chunk_buckets(ch.backward, true, st.expert_grad_bucket_params);
        break;
      }
    }
    const std::vector<int> dense_needs = bucket_needs(ch.forward, false, dense);
    const std::vector<int> expert_needs = bucket_needs(ch.forward, true, experts);
    // One stream in order of first use: before each segment, the dense buckets it needs,
    // then the expert ones.
    std::vector<int> dense_at(dense.size(), -1), expert_at(experts.size(), -1);
    size_t next_dense = 0, next_expert = 0;
    const auto take = [&](const std::vector<double>& buckets, std::vector<int>* at, size_t* next,
                          int upto, bool expert) {
      for (; static_cast<int>(*next) <= upto && *next < buckets.size(); ++*next) {
        (*at)[*next] = static_cast<int>(out.unit_params.size());
        out.unit_params.push_back(buckets[*next]);
        out.expert.push_back(expert ? 1 : 0);
      }
    };
    std::vector<int> waits;
    for (size_t i = 0; i < ch.forward.segments.size(); ++i) {
      take(dense, &dense_at, &next_dense, dense_needs[i], false);
      take(experts, &expert_at, &next_expert, expert_needs[i], true);
      int wait = -1;
      if (dense_needs[i] >= 0) wait = dense_at[dense_needs[i]];
      if (expert_needs[i] >= 0) wait = std::max(wait, expert_at[expert_needs[i]]);
      waits.push_back(wait);
    }
    take(dense, &dense_at, &next_dense, static_cast<int>(dense.size()), false);
    take(experts, &expert_at, &next_expert, static_cast<int>(experts.size()), true);
    out.waits.push_back(std::move(waits));
  }
  return out;
}

GatherSchedule layer_gathers(const Pass& pass) {
  GatherSchedule out;
  out.waits.emplace_back();
  for (const Segment& seg : pass.segments) {
    if (seg.weight_params > 0) {
      out.unit_params.push_back(seg.weight_params);
      out.expert.push_back(0);
    }
    if (seg.expert_weight_params > 0) {
      out.unit_params.push_back(seg.expert_weight_params);
      out.expert.push_back(1);
    }
    const bool gathers = seg.weight_params > 0 || seg.expert_weight_params > 0;
    out.waits.back().push_back(gathers ? static_cast<int>(out.unit_params.size()) - 1 : -1);
  }
  return out;
}

}  // namespace trident
