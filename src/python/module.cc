// The compiled part of the Python package `trident` (python/trident/): loading and checking
// scenarios in this process, each simulation in a forked child (SimGrid allows one engine per
// process). The pure-Python part adds sweep, compare, DataFrames and `python3 -m trident`.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "config/checks.h"
#include "config/diagnostics.h"
#include "config/scenario.h"
#include "core/errors.h"
#include "core/isolated_run.h"
#include "engine/simulator.h"
#include "layout/program.h"
#include "lowering/shortcuts.h"
#include "report/metric_table.h"
#include "report/metrics.h"
#include "report/writers.h"
#include "workload/stage_work.h"

namespace py = pybind11;

namespace {

// Raises the Python trident.ConfigError for `where`/`message` (set by the package).
[[noreturn]] void raise_config_error(const trident::SourceLocation& where, const std::string& text,
                                     const std::string& message) {
  py::object error_type = py::module_::import("trident").attr("ConfigError");
  py::object error = error_type(text, where.file, where.line, where.column, where.key, message);
  PyErr_SetObject(error_type.ptr(), error.ptr());
  throw py::error_already_set();
}

// The report of one step of `path` with `sets`, as `--format json` prints it. The scenario is
// loaded here (its errors raise ConfigError), the step simulated in a child.
std::string simulate_json(const std::string& path, const std::vector<std::string>& sets,
                          const std::string& fidelity) {
  trident::Fidelity fid;
  if (!trident::parse_fidelity(fidelity, &fid)) {
    throw py::value_error("fidelity must be fast or full, not '" + fidelity + "'");
  }
  trident::Scenario scenario;
  try {
    scenario = trident::load_scenario(path, sets);
    trident::check_simulation_activities(scenario, fid);
  } catch (const trident::ConfigError& e) {
    raise_config_error(e.where(), e.what(), e.message());
  }
  py::gil_scoped_release release;
  return trident::run_isolated([&] {
    const trident::Workload workload = trident::build_workload(scenario);
    const std::vector<trident::StageProgram> programs = trident::build_programs(scenario.plan);
    trident::SimOptions sim;
    sim.fidelity = fid;
    const trident::Timeline timeline = trident::simulate_step(scenario, workload, programs, sim);
    return trident::format_json(
        trident::make_report(scenario, workload, timeline, trident::fidelity_name(fid)));
  });
}

// Checks one file of any kind; returns its kind ("scenario", "cluster", ...). Raises
// ConfigError for the first problem, with every problem's line in its message.
std::string validate(const std::string& path, const std::vector<std::string>& sets) {
  trident::Diagnostics diag;
  const trident::CheckedConfigFile file = trident::check_config_file(path, sets, &diag);
  if (diag.empty() && file.kind == trident::ConfigFileKind::kScenario) {
    trident::attempt(
        &diag, [&] { trident::check_simulation_activities(file.specs, trident::Fidelity::kFast); });
  }
  if (!diag.empty()) {
    std::string text;
    for (const trident::Problem& p : diag.problems()) text += (text.empty() ? "" : "\n") + p.text();
    const trident::Problem& first = diag.problems().front();
    raise_config_error(first.where, text, first.message);
  }
  return trident::config_file_kind_name(*file.kind);
}

// The report's metric table (report/metric_table.h): one dict per key, in JSON order.
py::list report_metrics() {
  py::list out;
  for (const trident::Metric& m : trident::report_metrics()) {
    py::dict d;
    d["key"] = m.key;
    d["unit"] = m.unit;
    d["doc"] = m.doc;
    d["csv"] = m.csv;
    out.append(d);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_trident, m) {
  m.doc() = "trident's compiled core: scenario loading and checks, one simulation per child";
  m.def("simulate_json", &simulate_json, py::arg("scenario"), py::arg("sets"),
        py::arg("fidelity") = "fast");
  m.def("validate", &validate, py::arg("path"), py::arg("sets"));
  m.def("report_metrics", &report_metrics);
  m.attr("TRIDENT_BINARY") = TRIDENT_BINARY_PATH;
}
