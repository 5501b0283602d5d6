// Platform shapes with NVLink islands smaller than a node (two NVLink domains per node, PCIe
// pairs): each island gets its own NVLink links while its node's NICs are shared, single
// switch and fat tree alike. Issue 13, item 1: SimGrid aborted on "Link 'nic0_0_up' declared
// several times".
#include <catch2/catch.hpp>
#include <sstream>

#include "core/errors.h"
#include "core/isolated_run.h"
#include "engine/probes.h"
#include "engine/simulator.h"
#include "layout/program.h"
#include "platform/platform.h"
#include "report/metrics.h"
#include "sim_report.h"
#include "test_support.h"
#include "workload/stage_work.h"

using namespace trident;
using namespace trident::testing;

namespace {

double step_time(const Scenario& sc, Fidelity fidelity) {
  return isolated_double([&] {
    const Workload w = build_workload(sc);
    SimOptions opt;
    opt.fidelity = fidelity;
    const Timeline tl = simulate_step(sc, w, build_programs(sc.plan), opt);
    return make_report(sc, w, tl, fidelity_name(fidelity)).step_time_s;
  });
}

// The message of the exception thrown by probing `c` in a child process.
std::string isolated_double_error(const ClusterSpec& c) {
  try {
    isolated_double([&] { return probe_transfer_time(c, 0, 1, 1e9); });
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("islands smaller than a node build, single switch and fat tree", "[platform][islands]") {
  for (const Topology topology : {Topology::kFatTree, Topology::kSingleSwitch}) {
    for (const int island : {4, 2, 1}) {
      ClusterSpec c = a100_cluster(4);
      c.network.topology = topology;
      c.network.nodes_per_leaf = 2;
      c.nvlink.island_size = island;
      INFO("island " << island << ", fat tree " << (topology == Topology::kFatTree));
      CHECK(platform_shape_problem(c).empty());
      // GPU 0 to GPU 1: NVLink when they share an island, else the network.
      const double near = isolated_double([&] { return probe_transfer_time(c, 0, 1, 1e9); });
      if (island >= 2) {
        CHECK(near == Approx(1e9 / 300e9 + 2e-6).epsilon(1e-3));
      } else {
        CHECK(near == Approx(1e9 / 25e9 + 5e-6).epsilon(1e-3));
      }
      // GPUs of two islands of one node talk through their NICs.
      const double across = isolated_double([&] { return probe_transfer_time(c, 0, 7, 1e9); });
      CHECK(across == Approx(1e9 / 25e9 + 5e-6).epsilon(1e-3));
      // A whole step on all 32 GPUs, fast and full fidelity.
      const Scenario sc =
          scenario(c, gpt_model(4, 512, 8, 256, 8000), plan(2, 2, 8, 1, 4, ScheduleKind::k1F1B));
      const double fast = step_time(sc, Fidelity::kFast);
      CHECK(fast > 0);
      CHECK(step_time(sc, Fidelity::kFull) == Approx(fast).epsilon(0.05));
    }
  }
}

TEST_CASE("an island that neither divides nor spans nodes is refused, never aborted",
          "[platform][islands]") {
  ClusterSpec c = a100_cluster(3);
  c.nvlink.island_size = 3;
  CHECK(platform_shape_problem(c).find("neither divides nor spans") != std::string::npos);
  const std::string what = isolated_double_error(c);
  CHECK(what.find("cannot build the platform") != std::string::npos);
}
