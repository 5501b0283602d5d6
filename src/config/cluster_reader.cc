// Conversion of the `cluster:` section (DESIGN.md "Cluster").
#include "config/section_readers.h"

namespace trident {
namespace {

GpuSpec read_gpu(const MapReader& gpu) {
  gpu.check_keys();
  GpuSpec spec;
  spec.name = gpu.req_string("name");

  MapReader peaks = gpu.req_map("peak_flops");
  peaks.check_keys();
  for (Precision p :
       {Precision::kBf16, Precision::kFp16, Precision::kFp8, Precision::kTf32, Precision::kFp32}) {
    if (auto v = peaks.opt_quantity(precision_name(p), Dimension::kFlopRate, false,
                                    limits::kMaxPeakFlops)) {
      spec.peak_flops[p] = *v;
    }
  }
  if (spec.peak_flops.empty()) {
    gpu.fail("peak_flops",
             "no peak given (expected at least one of bf16, fp16, fp8, tf32, fp32, e.g. "
             "`bf16: 312 TFLOPS`)");
  }
  spec.memory_bytes = gpu.req_quantity("memory", Dimension::kBytes, false, limits::kMaxGpuMemory);
  spec.memory_bandwidth = gpu.req_quantity("memory_bandwidth", Dimension::kBandwidth, false,
                                           limits::kMaxMemoryBandwidth);

  if (auto eff = gpu.opt_map("efficiency")) {
    eff->check_keys();
    ComputeEfficiency& e = spec.efficiency;
    e.gemm = eff->opt_number("gemm", 0, true, 1).value_or(e.gemm);
    e.gemm_half_flops =
        eff->opt_quantity("gemm_half_size", Dimension::kFlops, true, limits::kMaxGemmHalfFlops)
            .value_or(e.gemm_half_flops);
    e.memory = eff->opt_number("memory", 0, true, 1).value_or(e.memory);
    e.kernel_overhead_s =
        eff->opt_quantity("kernel_overhead", Dimension::kTime, true, limits::kMaxLatency)
            .value_or(e.kernel_overhead_s);
  }
  return spec;
}

NvlinkSpec read_nvlink(const MapReader& nv, int gpus_per_node) {
  nv.check_keys();
  NvlinkSpec spec;
  spec.island_size =
      static_cast<int>(nv.opt_int("island_size", 1, limits::kMaxGpus).value_or(gpus_per_node));
  spec.bandwidth =
      nv.req_quantity("bandwidth", Dimension::kBandwidth, false, limits::kMaxLinkBandwidth);
  spec.latency = nv.req_quantity("latency", Dimension::kTime, true, limits::kMaxLatency);
  spec.protocol_efficiency = nv.opt_number("protocol_efficiency", 0, true, 1).value_or(1.0);
  spec.in_switch_reduction_efficiency =
      nv.opt_number("in_switch_reduction_efficiency", 0, true, 1).value_or(0.0);
  return spec;
}

NetworkSpec read_network(const MapReader& net, int gpus_per_node) {
  net.check_keys();
  NetworkSpec spec;
  const std::string topology =
      net.opt_choice("topology", {"single-switch", "fat-tree"}).value_or("fat-tree");
  spec.topology = topology == "single-switch" ? Topology::kSingleSwitch : Topology::kFatTree;
  spec.nics_per_node = static_cast<int>(
      net.opt_int("nics_per_node", 1, limits::kMaxNicsPerNode).value_or(gpus_per_node));
  spec.nic_bandwidth =
      net.req_quantity("nic_bandwidth", Dimension::kBandwidth, false, limits::kMaxLinkBandwidth);
  spec.latency = net.req_quantity("latency", Dimension::kTime, true, limits::kMaxLatency);
  spec.oversubscription =
      net.opt_number("oversubscription", 1, false, limits::kMaxOversubscription).value_or(1.0);
  spec.nodes_per_leaf =
      static_cast<int>(net.opt_int("nodes_per_leaf", 1, limits::kMaxNodes).value_or(16));
  spec.protocol_efficiency = net.opt_number("protocol_efficiency", 0, true, 1).value_or(1.0);
  return spec;
}

}  // namespace

ClusterSpec read_cluster(const MapReader& map) {
  map.check_keys();
  ClusterSpec c;
  c.name = map.req_string("name");
  c.gpu = read_gpu(map.req_map("gpu"));
  c.nodes = static_cast<int>(map.req_int("nodes", 1, limits::kMaxNodes));
  c.gpus_per_node = static_cast<int>(map.req_int("gpus_per_node", 1, limits::kMaxGpusPerNode));
  const std::int64_t gpus = checked_mul(c.nodes, c.gpus_per_node);
  if (gpus > limits::kMaxGpus) {
    map.fail("nodes", "cluster has " + std::to_string(gpus) +
                          " GPUs (nodes × gpus_per_node), more than the limit of " +
                          std::to_string(limits::kMaxGpus));
  }
  c.nvlink = read_nvlink(map.req_map("nvlink"), c.gpus_per_node);
  c.network = read_network(map.req_map("network"), c.gpus_per_node);
  for (const SpecIssue& issue : cluster_issues(c)) {
    throw ConfigError(locate_issue(map, issue), issue.message);
  }
  return c;
}

}  // namespace trident
