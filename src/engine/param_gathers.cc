#include "engine/param_gathers.h"

#include <algorithm>

namespace trident {

GatherSchedule bucket_gathers(const StageWork& st, double bucket_params) {
  GatherSchedule out;
  for (const ChunkWork& ch : st.chunks) {
    // Buckets in backward order (last layers first), from each layer's final gradients.
    std::vector<double> buckets;
    double open = 0;
    for (const Segment& seg : ch.backward.segments) {
      if (seg.grad_params <= 0) continue;
      open += seg.grad_params;
      if (open >= bucket_params) {
        buckets.push_back(open);
        open = 0;
      }
    }
    if (open > 0) buckets.push_back(open);
    std::reverse(buckets.begin(), buckets.end());
    // Bucket j of the chunk covers forward parameters [starts[j], starts[j] + buckets[j]).
    const int first = static_cast<int>(out.unit_params.size());
    std::vector<double> starts;
    double total = 0;
    for (double b : buckets) {
      starts.push_back(total);
      total += b;
      out.unit_params.push_back(b);
    }
    std::vector<int> waits;
    double used = 0;
    for (const Segment& seg : ch.forward.segments) {
      if (seg.weight_params <= 0) {
        waits.push_back(-1);
        continue;
      }
      used += seg.weight_params;
      // The last bucket starting below the end of this segment's parameters (a relative
      // tolerance: the sums run in opposite orders).
      int j = 0;
      while (j + 1 < static_cast<int>(starts.size()) && starts[j + 1] < used * (1 - 1e-12)) ++j;
      waits.push_back(buckets.empty() ? -1 : first + j);
    }
    out.waits.push_back(std::move(waits));
  }
  return out;
}

GatherSchedule layer_gathers(const Pass& pass) {
  GatherSchedule out;
  out.waits.emplace_back();
  for (const Segment& seg : pass.segments) {
    if (seg.weight_params > 0) {
      out.waits.back().push_back(static_cast<int>(out.unit_params.size()));
      out.unit_params.push_back(seg.weight_params);
    } else {
      out.waits.back().push_back(-1);
    }
  }
  return out;
}

}  // namespace trident
