#include "engine/phase_runner.h"

#include <algorithm>
#include <cmath>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>

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
    group = std::max(group, phase.floor_latency);
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
  // Closed-form rings: a group of side-by-side phases lasts at least its floor. What a group's
  // flows leave of its floor, and the floors of groups without flows, are slept only before
  // the next flows start (or at the end), in one sleep: the links are free meanwhile.
  double pending = 0;
  const auto sleep_pending = [&](double more) {
    if (pending + more <= 0) return;
    if (activities) *activities += 1;
    sg4::this_actor::sleep_for(pending + more);
    pending = 0;
  };
  double group_floor = 0;
  bool group_started = false;
  double group_start = 0;
  for (const Phase& phase : phases) {
    if (!phase.flows.empty() && !group_started) {
      sleep_pending(0);
      group_start = sg4::Engine::get_clock();
      group_started = true;
    }
    start_flows(platform, phase.flows, &comms);
    group_floor = std::max(group_floor, phase.floor_s);
    if (phase.with_next) continue;
    if (group_started) {
      if (activities) *activities += comms.size();
      sg4::Comm::wait_all(comms);
      comms.clear();
      pending = std::max(0.0, group_start + group_floor - sg4::Engine::get_clock());
    } else {
      pending += group_floor;
    }
    group_floor = 0;
    group_started = false;
  }
  if (group_started) {
    if (activities) *activities += comms.size();
    sg4::Comm::wait_all(comms);
    pending = std::max(0.0, group_start + group_floor - sg4::Engine::get_clock());
  } else {
    pending += group_floor;
  }
  // The collective's latency beyond what its routes add (NCCL's launch and per-step costs),
  // after the data as the collapsed steps' latencies were: the links are free meanwhile.
  sleep_pending(std::max(0.0, phases.front().latency - route_latencies(platform, phases)));
}

}  // namespace trident
