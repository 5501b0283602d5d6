#include "cli/flex_collective.h"

#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "engine/probes.h"
#include "lowering/flex_dispatch.h"

namespace trident {

int run_flex_dispatch(const ClusterSpec& c, int gpus, const FlexDispatchArgs& a,
                      const std::string& format) {
  std::vector<int> group(gpus);
  for (int i = 0; i < gpus; ++i) group[i] = i;
  const int island_size = c.nvlink.island_size;
  const auto island_of = [island_size](int gpu) { return gpu / island_size; };
  const double token_bytes = double(a.tokens) * a.hidden * a.element_bytes;
  const std::vector<double> times = probe_phase_series(
      c, gpus, {lower_flex_dispatch({group}, token_bytes, a.routing, 1, false, island_of)});
  const double t = times.front();
  const DeepEpBytes b = deepep_bytes(group, token_bytes, a.routing, island_of);
  const FlexLayout l = flex_layout(group, a.routing, island_of);
  const int islands = static_cast<int>(l.members.size());
  double gpus_hit = 0, islands_hit = 0;
  for (double p : l.gpu_hit) gpus_hit += p;
  for (double p : l.island_hit) islands_hit += p;
  const double rdma = t > 0 ? b.rdma / t / 1e9 : 0, nvl = t > 0 ? b.nvlink / t / 1e9 : 0;
  // DeepEP's tests name the RDMA figure the bottleneck across nodes, NVLink's inside one.
  const double bottleneck = islands > 1 ? rdma : nvl;
  if (format == "json") {
    nlohmann::ordered_json j;
    j["cluster"] = c.name;
    j["op"] = "all-to-all";
    j["dispatcher"] = "flex";
    j["gpus"] = gpus;
    j["islands"] = islands;
    j["tokens"] = a.tokens;
    j["hidden"] = a.hidden;
    j["element_bytes"] = a.element_bytes;
    j["experts"] = a.routing.experts;
    j["topk"] = a.routing.topk;
    j["groups"] = a.routing.groups;
    j["group_topk"] = a.routing.group_topk;
    j["gpus_per_token"] = gpus_hit;
    j["islands_per_token"] = islands_hit;
    j["time_us"] = t * 1e6;
    j["rdma_gbps"] = rdma;
    j["nvlink_gbps"] = nvl;
    j["bottleneck_gbps"] = bottleneck;
    std::cout << j.dump(2) << "\n";
  } else if (format == "csv") {
    std::cout << "gpus,islands,tokens,hidden,element_bytes,gpus_per_token,islands_per_token,"
                 "time_us,rdma_gbps,nvlink_gbps,bottleneck_gbps\n";
    std::cout << fmt::format("{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g}\n", gpus,
                             islands, a.tokens, a.hidden, a.element_bytes, gpus_hit, islands_hit,
                             t * 1e6, rdma, nvl, bottleneck);
  } else {
    std::cout << fmt::format(
        "# trident collective: flex (DeepEP) dispatch on {} GPUs of {} ({} island{}), "
        "simulated\n# {} tokens x hidden {} x {:.4g} B per GPU, top-{} of {} experts{}\n",
        gpus, c.name, islands, islands > 1 ? "s" : "", a.tokens, a.hidden, a.element_bytes,
        a.routing.topk, a.routing.experts,
        a.routing.groups > 1
            ? fmt::format(" in {} of {} groups", a.routing.group_topk, a.routing.groups)
            : "");
    std::cout << fmt::format("# a token reaches {:.3f} GPUs and {:.3f} islands on average\n",
                             gpus_hit, islands_hit);
    std::cout << fmt::format("{:>12} {:>12} {:>12} {:>12}\n", "time (us)", "RDMA GB/s",
                             "NVLink GB/s", "bottleneck");
    std::cout << fmt::format("{:>12.2f} {:>12.2f} {:>12.2f} {:>12.2f}\n", t * 1e6, rdma, nvl,
                             bottleneck);
  }
  return 0;
}

}  // namespace trident
