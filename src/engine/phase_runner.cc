#include "engine/phase_runner.h"

#include <algorithm>
#include <cmath>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>

namespace sg4 = simgrid::s4u;

namespace trident {
namespace {

void start_flows(const Platform& platform, const std::vector<Flow>& flows,
                 std::vector<sg4::CommPtr>* comms) {
  for (const Flow& f : flows) {
    const double eff = f.efficiency > 0 ? f.efficiency : platform.efficiency(f.src, f.dst);
    const double bytes = f.bytes / eff;
    comms->push_back(sg4::Comm::sendto_async(platform.host(f.src), platform.host(f.dst),
                                             static_cast<std::uint64_t>(std::llround(bytes))));
  }
}

}  // namespace

void run_flows(const Platform& platform, const std::vector<Flow>& flows,
               std::uint64_t* activities) {
  std::vector<sg4::CommPtr> comms;
  comms.reserve(flows.size());
  start_flows(platform, flows, &comms);
  if (activities) *activities += comms.size();
  sg4::Comm::wait_all(comms);
}

double route_latencies(const Platform& platform, const std::vector<Phase>& phases) {
  double total = 0, group = 0;
  for (const Phase& phase : phases) {
    for (const Flow& f : phase.flows) group = std::max(group, platform.latency(f.src, f.dst));
    if (!phase.with_next) {
      total += group;
      group = 0;
    }
  }
  return total + group;
}

void run_phases(const Platform& platform, const std::vector<Phase>& phases,
                std::uint64_t* activities) {
  if (phases.empty()) return;
  std::vector<sg4::CommPtr> comms;
  for (const Phase& phase : phases) {
    start_flows(platform, phase.flows, &comms);
    if (phase.with_next) continue;
    if (activities) *activities += comms.size();
    sg4::Comm::wait_all(comms);
    comms.clear();
  }
  if (!comms.empty()) {
    if (activities) *activities += comms.size();
    sg4::Comm::wait_all(comms);
  }
  // The collective's latency beyond what its routes add (NCCL's launch and per-step costs),
  // after the data as the collapsed steps' latencies were: the links are free meanwhile.
  const double extra = phases.front().latency - route_latencies(platform, phases);
  if (extra > 0) {
    if (activities) *activities += 1;
    sg4::this_actor::sleep_for(extra);
  }
}

}  // namespace trident
