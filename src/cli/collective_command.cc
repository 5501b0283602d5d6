// trident collective: one collective or a curve of sizes, as the engine simulates it on a
// cluster's platform, printed like nccl-tests (size, count, time, algbw, busbw).
//   trident collective --cluster dgx-h100 --nodes 2 --op all-reduce --size 1GiB
//   trident collective --cluster hgx-h200 --nodes 1 -b 1K -e 8G -f 2 --format csv
#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/fabric_options.h"
#include "cli/flex_collective.h"
#include "config/limits.h"
#include "config/references.h"
#include "config/scenario.h"
#include "core/text.h"
#include "core/units.h"
#include "engine/probes.h"
#include "lowering/all_to_all.h"
#include "lowering/collective_lowering.h"
#include "platform/platform.h"
#include "workload/nccl_model.h"

namespace po = boost::program_options;

namespace trident {
namespace {

enum class OpKind { kCollective, kSendRecv, kAllToAll };

struct Op {
  OpKind kind = OpKind::kCollective;
  CollectiveOp op = CollectiveOp::kAllReduce;
};

Op parse_op(const std::string& name) {
  if (name == "all-reduce") return {OpKind::kCollective, CollectiveOp::kAllReduce};
  if (name == "all-gather") return {OpKind::kCollective, CollectiveOp::kAllGather};
  if (name == "reduce-scatter") return {OpKind::kCollective, CollectiveOp::kReduceScatter};
  if (name == "send-recv") return {OpKind::kSendRecv, CollectiveOp::kAllReduce};
  if (name == "all-to-all") return {OpKind::kAllToAll, CollectiveOp::kAllReduce};
  throw po::error(
      "--op must be all-reduce, all-gather, reduce-scatter, send-recv or all-to-all, "
      "not '" +
      name + "'");
}

// Parses a size as nccl-tests writes it (8, 1K, 4M, 8G: powers of 1024) or as a quantity
// ("1 GiB", "100 MB").
double parse_size(const std::string& option, const std::string& text) {
  const std::string t = trim(text);
  if (!t.empty()) {
    const char last = t.back();
    const std::string digits = t.substr(0, t.size() - 1);
    const int shift = last == 'K' ? 10 : last == 'M' ? 20 : last == 'G' ? 30 : last == 'T' ? 40 : 0;
    if (shift > 0 && !digits.empty() &&
        digits.find_first_not_of("0123456789") == std::string::npos) {
      return std::ldexp(std::stod(digits), shift);
    }
    if (t.find_first_not_of("0123456789") == std::string::npos && t.size() < 16) {
      return std::stod(t);
    }
  }
  std::string error;
  const auto b = parse_quantity(t, Dimension::kBytes, &error);
  if (!b || *b < 1) {
    throw po::error(option + ": '" + text + "' is not a size of at least 1 byte (e.g. 1M, 8G, " +
                    "\"1 GiB\")" + (error.empty() ? "" : ": " + error));
  }
  return *b;
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out(1);
  for (char ch : text) {
    if (ch == ',') {
      out.emplace_back();
    } else {
      out.back() += ch;
    }
  }
  return out;
}

std::vector<double> sizes_of(const std::string& size, const std::string& sizes,
                             const std::string& begin, const std::string& end,
                             const std::string& factor) {
  std::vector<double> out;
  if (!size.empty()) out.push_back(parse_size("--size", size));
  if (!sizes.empty()) {
    for (const std::string& s : split_commas(sizes)) out.push_back(parse_size("--sizes", s));
  }
  if (!begin.empty() || !end.empty()) {
    const double b = parse_size("-b", begin.empty() ? end : begin);
    const double e = parse_size("-e", end.empty() ? begin : end);
    double f = 2;
    if (!factor.empty()) {
      try {
        f = std::stod(factor);
      } catch (const std::exception&) {
        f = 0;
      }
      if (!(f > 1)) throw po::error("-f must be a number above 1, not '" + factor + "'");
    }
    if (e < b) throw po::error("-e must not be below -b");
    for (double s = b; s <= e * (1 + 1e-12) && out.size() < 4096; s *= f) out.push_back(s);
  }
  if (out.empty()) throw po::error("missing size (expected --size, --sizes or -b/-e [-f])");
  return out;
}

CollectiveAlgorithm parse_algorithm(const std::string& name) {
  for (CollectiveAlgorithm a :
       {CollectiveAlgorithm::kAuto, CollectiveAlgorithm::kRing, CollectiveAlgorithm::kTree,
        CollectiveAlgorithm::kNvls, CollectiveAlgorithm::kNvlsTree}) {
    if (name == algorithm_name(a)) return a;
  }
  throw po::error("--algorithm must be auto, ring, tree, nvls or nvls_tree, not '" + name + "'");
}

CollectiveProtocol parse_protocol(const std::string& name) {
  for (CollectiveProtocol p : {CollectiveProtocol::kAuto, CollectiveProtocol::kLL,
                               CollectiveProtocol::kLL128, CollectiveProtocol::kSimple}) {
    if (name == protocol_name(p)) return p;
  }
  throw po::error("--protocol must be auto, ll, ll128 or simple, not '" + name + "'");
}

// Send-recv as nccl-tests runs it: every rank sends the buffer to the next, all at once.
std::vector<Phase> lower_send_recv(int gpus, double bytes) {
  Phase phase;
  for (int i = 0; i < gpus; ++i) phase.flows.push_back({i, (i + 1) % gpus, bytes, 0});
  return {phase};
}

// The flex dispatch's sizes and routing, as checks.cc states them for a scenario.
void check_flex_args(const FlexDispatchArgs& a, int gpus) {
  const ExpertRouting& r = a.routing;
  if (a.tokens < 1 || a.hidden < 1 || !(a.element_bytes > 0)) {
    throw po::error("--tokens, --hidden and --element-bytes must be positive");
  }
  if (r.experts < 1 || r.experts % gpus != 0) {
    throw po::error(
        fmt::format("--experts {} must be a positive multiple of the {} GPUs", r.experts, gpus));
  }
  if (r.topk < 1 || r.topk > r.experts) {
    throw po::error(fmt::format("--topk must be between 1 and --experts {}", r.experts));
  }
  if (r.groups != 0 || r.group_topk != 0) {
    if (r.groups < 1 || r.group_topk < 1 || r.experts % r.groups != 0 || r.group_topk > r.groups ||
        r.topk > r.group_topk * (r.experts / r.groups)) {
      throw po::error(
          "--groups must divide --experts, --group-topk be between 1 and --groups, and --topk "
          "fit in the experts of --group-topk groups");
    }
  }
}

}  // namespace

int run_collective_command(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: trident collective --cluster CLUSTER [--nodes N] [--gpus N] --op OP\n"
      "                          (--size S | --sizes S1,S2,... | -b S -e S [-f F]) [options]\n\n"
      "Simulates one collective per size on the cluster's platform (the engine's lowering and\n"
      "SimGrid, nothing else on the links) over GPUs 0..N-1 and prints it like nccl-tests:\n"
      "time, algbw = size / time, busbw = algbw * factor (all-reduce 2(n-1)/n; all-gather,\n"
      "reduce-scatter, all-to-all (n-1)/n; send-recv 1), and the algorithm and protocol the\n"
      "NCCL cost model chose (docs/collectives.md). Sizes as nccl-tests writes them (1K, 4M,\n"
      "8G: powers of 1024) or quantities (\"1 GiB\"). Exit code 2 on bad input.\n\noptions");
  std::string cluster_name, op_name = "all-reduce", size, sizes, begin, end, factor;
  std::string algorithm = "", protocol = "", format = "table", dispatcher = "alltoall";
  int nodes = 0, gpus = 0;
  FabricArgs fabric;
  FlexDispatchArgs flex;
  flex.routing.experts = 256;
  flex.routing.topk = 8;
  opts.add_options()("help,h", "show this help")("cluster", po::value(&cluster_name),
                                                 "cluster file or shipped name (required)")(
      "nodes", po::value(&nodes), "nodes of the cluster (default: the file's)")(
      "gpus", po::value(&gpus), "GPUs taking part, the first N (default: all of the nodes)")(
      "op", po::value(&op_name),
      "all-reduce (default), all-gather, reduce-scatter, send-recv or all-to-all")(
      "size", po::value(&size), "one size")("sizes", po::value(&sizes), "sizes, comma-separated")(
      ",b", po::value(&begin), "first size of a geometric series (nccl-tests -b)")(
      ",e", po::value(&end), "last size (nccl-tests -e)")(
      ",f", po::value(&factor), "factor between sizes (nccl-tests -f, default 2)")(
      "algorithm", po::value(&algorithm),
      "auto, ring, tree, nvls or nvls_tree (default: the cluster's cluster.nccl.algorithm)")(
      "protocol", po::value(&protocol), "auto, ll, ll128 or simple (default: the cluster's)")(
      "format", po::value(&format), "table (default), json or csv")(
      "dispatcher", po::value(&dispatcher),
      "all-to-all only: alltoall (default: one flow per pair, --size bytes per GPU) or flex "
      "(DeepEP: one dispatch of --tokens x --hidden, docs/moe.md)")(
      "tokens", po::value(&flex.tokens), "flex: tokens per GPU (default 4096)")(
      "hidden", po::value(&flex.hidden), "flex: hidden size (default 7168)")(
      "element-bytes", po::value(&flex.element_bytes),
      "flex: bytes per element (default 2; FP8 with its scales: 1.03125)")(
      "experts", po::value(&flex.routing.experts), "flex: routed experts (default 256)")(
      "topk", po::value(&flex.routing.topk), "flex: experts per token (default 8)")(
      "groups", po::value(&flex.routing.groups),
      "flex: expert groups for group-limited routing (default none)")(
      "group-topk", po::value(&flex.routing.group_topk), "flex: groups per token");
  add_fabric_options(&opts, &fabric);
  std::vector<std::string> pos;
  po::variables_map vm;
  if (!parse_command_line(args, opts, 0, "", &pos, &vm)) return 0;
  if (cluster_name.empty()) throw po::error("missing --cluster (a cluster file or shipped name)");
  if (format != "table" && format != "json" && format != "csv") {
    throw po::error("--format must be table, json or csv, not '" + format + "'");
  }
  const Op op = parse_op(op_name);
  const bool flex_dispatch = dispatcher == "flex";
  if (!flex_dispatch && dispatcher != "alltoall") {
    throw po::error("--dispatcher must be alltoall or flex, not '" + dispatcher + "'");
  }
  if (flex_dispatch && op.kind != OpKind::kAllToAll) {
    throw po::error("--dispatcher flex needs --op all-to-all");
  }
  const std::vector<double> bytes =
      flex_dispatch ? std::vector<double>{} : sizes_of(size, sizes, begin, end, factor);
  ClusterSpec c =
      load_cluster_file(resolve_file_argument(cluster_name, {ConfigFileKind::kCluster}));
  if (vm.count("nodes")) {
    if (nodes < 1 || nodes > limits::kMaxNodes ||
        static_cast<double>(nodes) * c.gpus_per_node > limits::kMaxGpus) {
      throw po::error(fmt::format("--nodes must be between 1 and {} (at most {} GPUs), not {}",
                                  limits::kMaxNodes, limits::kMaxGpus, nodes));
    }
    c.nodes = nodes;
  }
  apply_fabric_args(fabric, vm, &c);
  if (!algorithm.empty()) c.nccl.algorithm = parse_algorithm(algorithm);
  if (!protocol.empty()) c.nccl.protocol = parse_protocol(protocol);
  const int n = vm.count("gpus") ? gpus : c.total_gpus();
  if (n < 2 || n > c.total_gpus()) {
    throw po::error(fmt::format("--gpus must be between 2 and the cluster's {} GPUs, not {}",
                                c.total_gpus(), n));
  }
  const std::string shape = platform_shape_problem(c);
  if (!shape.empty()) throw po::error("cluster " + c.name + ": " + shape);

  if (flex_dispatch) {
    check_flex_args(flex, n);
    return run_flex_dispatch(c, n, flex, format);
  }
  std::vector<int> group(n);
  for (int i = 0; i < n; ++i) group[i] = i;
  const int island_size = c.nvlink.island_size;
  const auto island_of = [island_size](int gpu) { return gpu / island_size; };
  CollectiveShape cshape = collective_shape(group, island_of);
  cshape.sites = group_sites(group, c);
  LoweringOptions lowering;
  lowering.cluster = &c;
  std::vector<std::vector<Phase>> series;
  std::vector<CollectivePlan> plans;
  for (double b : bytes) {
    if (op.kind == OpKind::kSendRecv) {
      series.push_back(lower_send_recv(n, b));
      plans.emplace_back();
    } else if (op.kind == OpKind::kAllToAll) {
      series.push_back(lower_all_to_all(std::vector<std::vector<int>>{group}, b));
      plans.emplace_back();
    } else {
      plans.push_back(choose_collective_plan(op.op, cshape, b, c));
      series.push_back(lower_plan(plans.back(), {group}, island_of, lowering));
    }
  }
  const std::vector<double> times = probe_phase_series(c, n, series);
  const double factor_bus = op.kind == OpKind::kSendRecv   ? 1.0
                            : op.kind == OpKind::kAllToAll ? double(n - 1) / n
                                                           : bus_bandwidth_factor(op.op, n);
  const bool collective = op.kind == OpKind::kCollective;

  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::string table, csv = "size_bytes,count,time_us,algbw_gbps,busbw_gbps,algorithm,protocol\n";
  for (size_t i = 0; i < bytes.size(); ++i) {
    const double t = times[i], algbw = t > 0 ? bytes[i] / t / 1e9 : 0;
    const std::string algo = collective                     ? algorithm_name(plans[i].algorithm)
                             : op.kind == OpKind::kSendRecv ? "p2p"
                                                            : "pairwise";
    const std::string proto = collective ? protocol_name(plans[i].protocol) : "simple";
    const double count = std::floor(bytes[i] / 4);  // float elements, as nccl-tests -d float
    nlohmann::ordered_json r;
    r["size_bytes"] = bytes[i];
    r["count"] = count;
    r["time_us"] = t * 1e6;
    r["algbw_gbps"] = algbw;
    r["busbw_gbps"] = algbw * factor_bus;
    r["algorithm"] = algo;
    r["protocol"] = proto;
    r["chunks"] = collective ? plans[i].chunks : 1;
    rows.push_back(r);
    table += fmt::format("{:>14.0f} {:>13.0f} {:>12.2f} {:>9.2f} {:>9.2f}  {:<10}{}\n", bytes[i],
                         count, t * 1e6, algbw, algbw * factor_bus, algo, proto);
    csv += fmt::format("{:.0f},{:.0f},{:.6g},{:.6g},{:.6g},{},{}\n", bytes[i], count, t * 1e6,
                       algbw, algbw * factor_bus, algo, proto);
  }
  if (format == "json") {
    nlohmann::ordered_json j;
    j["cluster"] = c.name;
    j["op"] = op_name;
    j["gpus"] = n;
    j["nodes"] = c.nodes;
    j["islands"] = cshape.islands;
    j["bus_factor"] = factor_bus;
    j["results"] = rows;
    std::cout << j.dump(2) << "\n";
  } else if (format == "csv") {
    std::cout << csv;
  } else {
    std::cout << fmt::format(
        "# trident collective: {} on {} GPUs of {} ({} island{} of {}), "
        "simulated\n",
        op_name, n, c.name, cshape.islands, cshape.islands > 1 ? "s" : "", island_size);
    if (fabric.given(vm)) std::cout << "# fabric: " << fabric_label(c) << "\n";
    std::cout << fmt::format("#{:>13} {:>13} {:>12} {:>9} {:>9}  {:<10}{}\n", "size (B)", "count",
                             "time (us)", "algbw", "busbw", "algorithm", "protocol");
    std::cout << fmt::format("#{:>13} {:>13} {:>12} {:>9} {:>9}\n", "", "(float)", "", "(GB/s)",
                             "(GB/s)");
    std::cout << table;
  }
  return 0;
}

}  // namespace trident
