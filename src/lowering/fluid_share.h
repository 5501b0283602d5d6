// Max-min fair sharing of a few flows over time, in closed form: the fluid model SimGrid's
// network uses (CM02, "max-min" with each flow bounded by its rate alone), solved event by
// event for flows whose starts and sizes are known. LinkClaims uses it to time together the
// claimed flows that meet on links (lowering/link_claims.h). Pure; no SimGrid.
#ifndef TRIDENT_LOWERING_FLUID_SHARE_H_
#define TRIDENT_LOWERING_FLUID_SHARE_H_

#include <utility>
#include <vector>

namespace trident {

// A flow that moves `bytes` from `start` (seconds) at most at `rate` (bytes/s, its rate alone)
// over `links`: (link id, capacity in bytes/s).
struct FluidFlow {
  double start = 0;
  double bytes = 0;
  double rate = 0;
  std::vector<std::pair<int, double>> links;
};

// A span of time over which a flow moves bytes at one rate.
struct FluidSpan {
  double from = 0, to = 0, rate = 0;
};

struct FluidShare {
  std::vector<std::vector<FluidSpan>> spans;  // per flow, in time order, from its start
  std::vector<double> end;                    // per flow: when its last byte arrives
  bool slowed = false;                        // some flow ran below its rate alone
};

// Returns each flow's spans and arrival when the flows share their links max-min fairly: at
// any instant, the flows moving bytes get the max-min fair allocation of the links they use,
// each bounded by its rate; the allocation changes only when a flow starts or arrives.
// Requires positive rates and capacities, bytes >= 0.
FluidShare fluid_share(const std::vector<FluidFlow>& flows);

// Returns the max-min fair rates of `flows` (all moving bytes at once), bounded by their rates
// (progressive filling).
std::vector<double> max_min_rates(const std::vector<const FluidFlow*>& flows);

}  // namespace trident

#endif  // TRIDENT_LOWERING_FLUID_SHARE_H_
