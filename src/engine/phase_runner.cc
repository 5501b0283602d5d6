#include "engine/phase_runner.h"

#include <algorithm>
#include <cmath>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>

namespace sg4 = simgrid::s4u;

namespace trident {

void run_flows(const Platform& platform, const std::vector<Flow>& flows,
               std::uint64_t* activities) {
  std::vector<sg4::CommPtr> comms;
  comms.reserve(flows.size());
  for (const Flow& f : flows) {
    const double eff = f.efficiency > 0 ? f.efficiency : platform.efficiency(f.src, f.dst);
    const double bytes = f.bytes / eff;
    comms.push_back(sg4::Comm::sendto_async(platform.host(f.src), platform.host(f.dst),
                                            static_cast<std::uint64_t>(std::llround(bytes))));
  }
  if (activities) *activities += comms.size();
  sg4::Comm::wait_all(comms);
}

void run_phases(const Platform& platform, const std::vector<Phase>& phases,
                std::uint64_t* activities) {
  for (const Phase& phase : phases) {
    run_flows(platform, phase.flows, activities);
    if (phase.steps > 1) {
      double latency = 0;
      for (const Flow& f : phase.flows) latency = std::max(latency, platform.latency(f.src, f.dst));
      if (activities) *activities += 1;
      sg4::this_actor::sleep_for((phase.steps - 1) * latency);
    }
  }
}

}  // namespace trident
