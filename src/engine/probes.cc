#include "engine/probes.h"

#include <algorithm>
#include <cmath>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "engine/phase_runner.h"
#include "lowering/all_to_all.h"
#include "platform/platform.h"

namespace sg4 = simgrid::s4u;

namespace trident {
namespace {

int max_gpu(const std::vector<std::vector<int>>& groups) {
  int m = 0;
  for (const auto& g : groups) {
    for (int gpu : g) m = std::max(m, gpu);
  }
  return m;
}

// Runs `body` as the only actor on a fresh engine and platform; returns the final clock.
template <class Body>
double run_probe(const ClusterSpec& cluster, int gpus, Body body) {
  int argc = 2;
  char arg0[] = "trident-probe";
  char arg1[] = "--log=root.thres:critical";
  char* argv[] = {arg0, arg1, nullptr};
  sg4::Engine engine(&argc, argv);
  configure_network_model();
  Platform platform(cluster, 1e12, gpus);
  sg4::Actor::create("probe", platform.host(0), [&]() { body(platform); });
  engine.run();
  return sg4::Engine::get_clock();
}

}  // namespace

double probe_transfer_time(const ClusterSpec& cluster, int src, int dst, double bytes) {
  return run_probe(cluster, std::max(src, dst) + 1, [&](const Platform& platform) {
    std::vector<Phase> phases(1);
    phases[0].flows.push_back({src, dst, bytes});
    run_phases(platform, phases, nullptr);
  });
}

double probe_collective_time(const ClusterSpec& cluster, CollectiveOp op,
                             const std::vector<std::vector<int>>& groups, double bytes,
                             bool collapse_steps) {
  return run_probe(cluster, max_gpu(groups) + 1, [&](const Platform& platform) {
    LoweringOptions opt;
    opt.collapse_steps = collapse_steps;
    opt.cluster = &cluster;
    const auto island_of = [&platform](int gpu) { return platform.island_of(gpu); };
    run_phases(platform,
               op == CollectiveOp::kAllToAll ? lower_all_to_all(groups, bytes)
                                             : lower_collective(op, groups, bytes, island_of, opt),
               nullptr);
  });
}

std::vector<double> probe_phase_series(const ClusterSpec& cluster, int gpus,
                                       const std::vector<std::vector<Phase>>& series) {
  std::vector<double> out;
  run_probe(cluster, gpus, [&](const Platform& platform) {
    for (const auto& phases : series) {
      const double start = sg4::Engine::get_clock();
      run_phases(platform, phases, nullptr);
      out.push_back(sg4::Engine::get_clock() - start);
    }
  });
  return out;
}

ClaimProbe probe_claim(const ClusterSpec& cluster, int gpus, const std::vector<Phase>& first,
                       const std::vector<Phase>& second, double delay, bool claimed,
                       bool second_claimed, const std::vector<Phase>& third, double third_delay,
                       bool third_claimed) {
  ClaimProbe out;
  run_probe(cluster, gpus, [&](const Platform& platform) {
    // Runs `phases` as a claim when asked and they have a closed form, else as flows.
    const auto run = [&platform](const std::vector<Phase>& phases, bool as_claim) {
      AloneSchedule alone;
      const bool timable = alone_schedule(platform, phases, &alone);
      Claim claim;
      const sg4::SemaphorePtr wake = sg4::Semaphore::create(0);
      claim.wake = [wake]() { wake->release(); };
      if (!as_claim || !timable || !run_claimed(platform, phases, alone, &claim, wake, nullptr)) {
        run_phases(platform, phases, nullptr);
      }
      return timable ? alone.duration : -1.0;
    };
    // Counts what the claims did once every run has ended.
    const auto tally = [&]() {
      out.interruptions = platform.claims().interruptions();
      out.shared = platform.claims().shared();
    };
    sg4::Actor::create("second", platform.host(0), [&, run, tally]() {  // outlives this actor
      sg4::this_actor::sleep_for(delay);
      run(second, second_claimed);
      out.second_end = sg4::Engine::get_clock();
      tally();
    });
    if (!third.empty()) {
      sg4::Actor::create("third", platform.host(0), [&, run, tally]() {
        sg4::this_actor::sleep_for(third_delay);
        run(third, third_claimed);
        out.third_end = sg4::Engine::get_clock();
        tally();
      });
    }
    out.alone_s = run(first, claimed);
    out.first_end = sg4::Engine::get_clock();
    tally();
  });
  return out;
}

}  // namespace trident
