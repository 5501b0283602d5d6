// Simulates a scenario in a child process (SimGrid allows one engine per process) and returns
// the scalar keys of its report: what the engine tests compare across fidelities and settings.
#ifndef TRIDENT_TESTS_SIM_REPORT_H_
#define TRIDENT_TESTS_SIM_REPORT_H_

#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "core/isolated_run.h"
#include "engine/probes.h"
#include "engine/simulator.h"
#include "layout/program.h"
#include "report/metrics.h"
#include "workload/stage_work.h"

namespace trident::testing {

// Returns fn() computed in a child process (one SimGrid engine per process), to 17 digits.
inline double isolated_double(const std::function<double()>& fn) {
  return std::stod(run_isolated([&]() {
    std::ostringstream out;
    out.precision(17);
    out << fn();
    return out.str();
  }));
}

// Returns step time, bubble, compute utilization and every exposed-communication key of
// `sc` simulated at `fidelity` (the other Report fields stay at their defaults).
inline Report simulate_report(const Scenario& sc, Fidelity fidelity) {
  const std::string text = run_isolated([&]() {
    const Workload w = build_workload(sc);
    SimOptions opt;
    opt.fidelity = fidelity;
    const Timeline tl = simulate_step(sc, w, build_programs(sc.plan), opt);
    const Report r = make_report(sc, w, tl, fidelity_name(fidelity));
    std::ostringstream out;
    out.precision(17);
    out << r.step_time_s << " " << r.bubble_fraction << " " << r.compute_utilization << " "
        << r.tp_comm_exposed_s << " " << r.pp_comm_exposed_s << " " << r.dp_comm_exposed_s << " "
        << r.dp_param_gather_exposed_s << " " << r.cp_comm_exposed_s << " " << r.ep_comm_exposed_s;
    return out.str();
  });
  std::istringstream in(text);
  Report r;
  in >> r.step_time_s >> r.bubble_fraction >> r.compute_utilization >> r.tp_comm_exposed_s >>
      r.pp_comm_exposed_s >> r.dp_comm_exposed_s >> r.dp_param_gather_exposed_s >>
      r.cp_comm_exposed_s >> r.ep_comm_exposed_s;
  return r;
}

// Returns the step time of `sc` simulated at fast fidelity without intervals (as `trident
// plan` simulates its candidates), in a child process.
inline double simulated_step(const Scenario& sc) {
  return std::stod(run_isolated([&]() {
    const std::vector<StageProgram> programs = build_programs(sc.plan);
    const Workload w = build_workload(sc, programs);
    SimOptions options;
    options.record_intervals = false;
    std::ostringstream out;
    out.precision(17);
    out << simulate_step(sc, w, programs, options).step_time_s;
    return out.str();
  }));
}

// Returns probe_phase_series(c, gpus, series()) run in a child process: the simulated seconds
// of each collective's phases, one after another on one platform.
inline std::vector<double> isolated_phase_series(
    const ClusterSpec& c, int gpus,
    const std::function<std::vector<std::vector<Phase>>()>& series) {
  std::istringstream in(run_isolated([&]() {
    std::ostringstream out;
    out.precision(17);
    for (double t : probe_phase_series(c, gpus, series())) out << t << ' ';
    return out.str();
  }));
  std::vector<double> t;
  for (double x; in >> x;) t.push_back(x);
  return t;
}

}  // namespace trident::testing

#endif  // TRIDENT_TESTS_SIM_REPORT_H_
