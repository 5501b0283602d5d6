#include "engine/phase_runner.h"

#include <algorithm>
#include <cmath>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Semaphore.hpp>

namespace sg4 = simgrid::s4u;

namespace trident {
namespace {

// Flows started together, with the routes whose links they hold in flight (link_claims.h).
struct InFlight {
  std::vector<sg4::CommPtr> comms;
  std::vector<const Route*> routes;
};

double flow_size(const Platform& platform, const Flow& f) {
  const double eff = f.efficiency > 0 ? f.efficiency : platform.efficiency(f.src, f.dst);
  return static_cast<double>(std::llround(f.bytes / eff));
}

void start_flows(const Platform& platform, const std::vector<Flow>& flows, InFlight* out) {
  const double now = sg4::Engine::get_clock();
  for (const Flow& f : flows) {
    const Route& r = platform.route(f.src, f.dst);
    // Before the flow exists: a claim it interrupts turns back into flows at this instant.
    platform.claims().begin_flow(r.links, now);
    out->routes.push_back(&r);
    const auto size = static_cast<std::uint64_t>(flow_size(platform, f));
    for (const auto& leg : r.legs) {
      out->comms.push_back(sg4::Comm::sendto_async(leg.first, leg.second, size));
    }
  }
}

void wait_flows(const Platform& platform, InFlight* f, std::uint64_t* activities) {
  if (activities) *activities += f->comms.size();
  sg4::Comm::wait_all(f->comms);
  for (const Route* r : f->routes) platform.claims().end_flow(r->links);
  f->comms.clear();
  f->routes.clear();
}

void sleep_for(double seconds, std::uint64_t* activities) {
  if (seconds <= 0) return;
  if (activities) *activities += 1;
  sg4::this_actor::sleep_for(seconds);
}

// Runs phases [begin, end) as run_phases does, after sleeping `pending`, and closes with the
// wait `extra` (the collective's latency beyond its routes').
void run_range(const Platform& platform, const std::vector<Phase>& phases, size_t begin,
               double pending, double extra, std::uint64_t* activities) {
  InFlight flight;
  // Closed-form rings: a group of side-by-side phases lasts at least its floor. What a group's
  // flows leave of its floor, and the floors of groups without flows, are slept only before
  // the next flows start (or at the end), in one sleep: the links are free meanwhile.
  double group_floor = 0;
  bool group_started = false;
  double group_start = 0;
  for (size_t i = begin; i < phases.size(); ++i) {
    const Phase& phase = phases[i];
    if (!phase.flows.empty() && !group_started) {
      sleep_for(pending, activities);
      pending = 0;
      group_start = sg4::Engine::get_clock();
      group_started = true;
    }
    start_flows(platform, phase.flows, &flight);
    group_floor = std::max(group_floor, phase.floor_s);
    if (phase.with_next && i + 1 < phases.size()) continue;
    if (group_started) {
      wait_flows(platform, &flight, activities);
      pending = std::max(0.0, group_start + group_floor - sg4::Engine::get_clock());
    } else {
      pending += group_floor;
    }
    group_floor = 0;
    group_started = false;
  }
  // The collective's latency beyond what its routes add (NCCL's launch and per-step costs),
  // after the data as the collapsed steps' latencies were: the links are free meanwhile.
  sleep_for(pending + extra, activities);
}

double extra_latency(const Platform& platform, const std::vector<Phase>& phases) {
  return std::max(0.0, phases.front().latency - route_latencies(platform, phases));
}

}  // namespace

void run_flows(const Platform& platform, const std::vector<Flow>& flows,
               std::uint64_t* activities) {
  InFlight flight;
  start_flows(platform, flows, &flight);
  wait_flows(platform, &flight, activities);
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
  run_range(platform, phases, 0, 0, extra_latency(platform, phases), activities);
}

bool alone_schedule(const Platform& platform, const std::vector<Phase>& phases,
                    AloneSchedule* out) {
  *out = AloneSchedule();
  if (phases.empty()) return true;
  double t = 0, pending = 0, floor = 0;
  size_t first = 0;
  bool flows = false;
  std::vector<int> used;  // the links of the group's flows so far
  for (size_t i = 0; i < phases.size(); ++i) {
    const Phase& phase = phases[i];
    if (!phase.flows.empty() && !flows) {
      t += pending;
      pending = 0;
      flows = true;
      TimedGroup g;
      g.first_phase = first;
      g.first_flow = out->flows.size();
      g.start = t;
      out->groups.push_back(g);
      used.clear();
    }
    for (const Flow& f : phase.flows) {
      const Route& r = platform.route(f.src, f.dst);
      for (int l : r.links) {
        if (std::find(used.begin(), used.end(), l) != used.end()) return false;
        used.push_back(l);
      }
      TimedFlow tf;
      tf.src = f.src;
      tf.dst = f.dst;
      tf.size = flow_size(platform, f);
      tf.latency = r.latency;
      tf.rate = r.bandwidth;
      tf.start = t;
      tf.end = t + r.latency + tf.size / r.bandwidth;
      tf.links = &r.links;
      tf.link_bandwidth = &r.link_bandwidth;
      out->flows.push_back(tf);
    }
    floor = std::max(floor, phase.floor_s);
    if (phase.with_next && i + 1 < phases.size()) continue;
    if (flows) {
      TimedGroup& g = out->groups.back();
      g.end_phase = i + 1;
      g.end_flow = out->flows.size();
      for (size_t k = g.first_flow; k < g.end_flow; ++k) {
        g.flows_end = std::max(g.flows_end, out->flows[k].end);
      }
      g.flows_end = std::max(g.flows_end, g.start);
      g.floor_end = g.start + floor;
      t = g.flows_end;
      pending = std::max(0.0, g.floor_end - t);
    } else {
      pending += floor;
    }
    floor = 0;
    flows = false;
    first = i + 1;
  }
  out->extra_latency = extra_latency(platform, phases);
  out->duration = t + pending + out->extra_latency;
  return true;
}

void run_phases_from(const Platform& platform, const std::vector<Phase>& phases,
                     const AloneSchedule& s, double elapsed, std::uint64_t* activities,
                     const Claim* claim) {
  const double now = sg4::Engine::get_clock();
  // The real time of alone time x into the run.
  const double base = (claim != nullptr ? claim->to_alone(now) : now) - elapsed;
  const auto real = [&](double x) {
    return claim != nullptr ? claim->to_real(base + x) : base + x;
  };
  for (const TimedGroup& g : s.groups) {
    if (elapsed >= g.flows_end) continue;
    if (elapsed < g.start) {
      // Between groups: the links are free until this group's flows start.
      sleep_for(real(g.start) - now, activities);
      run_range(platform, phases, g.first_phase, 0, s.extra_latency, activities);
      return;
    }
    // In this group's flows: each goes on with what it has left. The group still lasts its
    // floor from its start (warps begin after it).
    std::vector<Flow> rest;
    double resid_end = real(g.start) + (g.floor_end - g.start);  // and arrivals too close
    for (size_t k = g.first_flow; k < g.end_flow; ++k) {         // for a new flow's latency
      const TimedFlow& f = s.flows[k];
      if (elapsed >= f.end) continue;
      const double latency_left = std::max(0.0, f.start + f.latency - elapsed);
      const double bytes_left = f.size - std::max(0.0, elapsed - f.start - f.latency) * f.rate;
      // The new flow pays its latency again: less what the flow would have moved meanwhile,
      // at the rates the claim timed it at (slowed where a claim timed with it shares links).
      const double moved_meanwhile =
          claim != nullptr ? claim->to_alone(now + f.latency) - claim->to_alone(now + latency_left)
                           : f.latency - latency_left;
      const double size = bytes_left - moved_meanwhile * f.rate;
      if (size < 1) {
        resid_end = std::max(resid_end, real(f.end));
      } else {
        rest.push_back({f.src, f.dst, size, 1.0});
      }
    }
    if (!rest.empty()) run_flows(platform, rest, activities);
    const double pending = std::max(0.0, resid_end - sg4::Engine::get_clock());
    run_range(platform, phases, g.end_phase, pending, s.extra_latency, activities);
    return;
  }
  // Past every flow: only waits are left.
  sleep_for(real(s.duration) - now, activities);
}

void add_claim_windows(const AloneSchedule& s, double start, std::vector<LinkUse>* uses,
                       double beside) {
  for (size_t n = 0; n < s.groups.size(); ++n) {
    const TimedGroup& g = s.groups[n];
    const bool last = n + 1 == s.groups.size();
    // A GEMM beside the flows ends the run no earlier than its end: as a floor of the last
    // group, less what follows that group (floors and waits, no flows). A flow of an earlier
    // group is not slowed in closed form then (the GEMM would absorb part of its delay).
    const double group_end = std::max(g.flows_end, g.floor_end);
    const double gemm_floor = last ? beside - (s.duration - group_end) : 0;
    const bool one = (beside <= 0 || last) && g.end_flow == g.first_flow + 1;
    for (size_t k = g.first_flow; k < g.end_flow; ++k) {
      const TimedFlow& f = s.flows[k];
      const int id = one ? static_cast<int>(uses->size()) : -1;
      for (size_t i = 0; i < f.links->size(); ++i) {
        uses->push_back({(*f.links)[i], start + f.start, start + f.end, id,
                         start + f.start + f.latency, f.rate, (*f.link_bandwidth)[i],
                         start + std::max({f.end, g.floor_end, gemm_floor})});
      }
    }
  }
}

double wait_claim(const Platform& platform, Claim* claim, const sg4::SemaphorePtr& wake,
                  double until, std::uint64_t* activities) {
  // Wake-ups at this very instant are pending: take them (only wake() releases `wake`).
  const auto drain = [&wake]() {
    while (!wake->would_block()) wake->acquire();
  };
  for (;;) {
    const double now = sg4::Engine::get_clock();
    const long revisions = claim->revisions;
    if (activities) *activities += 1;
    const double end = claim->to_real(until);
    // Up to the next check, or to the end.
    const bool to_check = claim->check_at < end;
    const bool ran_out =
        wake->acquire_timeout(std::max(0.0, (to_check ? claim->check_at : end) - now));
    const double t = sg4::Engine::get_clock();
    // Interrupted before the end (at the very instant it ends, it ran out first).
    if (claim->interrupted_at >= 0 && (!ran_out || to_check || claim->interrupted_at < t)) {
      drain();
      return claim->to_alone(claim->interrupted_at);
    }
    if (ran_out && to_check) {
      // A window of the claim opens on a link that carried a flow: the claim stands if the
      // flow has arrived, else it stops here (check interrupts it).
      platform.claims().check(claim, t);
      if (claim->interrupted_at < 0) continue;
      drain();
      return claim->to_alone(t);
    }
    // Ran out with no revision meanwhile, or with one that left less than SimGrid's precision
    // (1 ns; its sleeps round up to it).
    if (ran_out && (claim->revisions == revisions || claim->to_real(until) - t < 1e-9)) {
      drain();
      platform.claims().release(claim);
      return -1;
    }
    // Revised: wait on for the new end.
  }
}

bool run_claimed(const Platform& platform, const std::vector<Phase>& phases,
                 const AloneSchedule& alone, Claim* claim, const sg4::SemaphorePtr& wake,
                 std::uint64_t* activities) {
  const double now = sg4::Engine::get_clock();
  claim->uses.clear();
  add_claim_windows(alone, now, &claim->uses);
  if (!platform.claims().try_claim(claim, now)) return false;
  const double at = wait_claim(platform, claim, wake, now + alone.duration, activities);
  if (at >= 0) run_phases_from(platform, phases, alone, at - now, activities, claim);
  return true;
}

}  // namespace trident
