// Conversion of the `cluster:` section (docs/schema.md, `cluster`).
#include <algorithm>

#include "config/section_readers.h"

namespace trident {
namespace {

NvlinkSpec read_nvlink(const MapReader& nv, int gpus_per_node) {
  nv.check_keys();
  NvlinkSpec spec;
  nv.field([&] {
    spec.island_size = static_cast<int>(nv.integer("island_size").value_or(gpus_per_node));
  });
  nv.field([&] { spec.bandwidth = *nv.number("bandwidth"); });
  nv.field([&] { spec.latency = *nv.number("latency"); });
  nv.field([&] { spec.protocol_efficiency = *nv.number("protocol_efficiency"); });
  nv.field(
      [&] { spec.in_switch_reduction_efficiency = *nv.number("in_switch_reduction_efficiency"); });
  return spec;
}

NetworkSpec read_network(const MapReader& net, int gpus_per_node) {
  net.check_keys();
  NetworkSpec spec;
  net.field([&] {
    const std::string t = *net.text("topology");
    spec.topology = t == "single-switch"    ? Topology::kSingleSwitch
                    : t == "rail-optimized" ? Topology::kRailOptimized
                                            : Topology::kFatTree;
  });
  net.field([&] {
    spec.nics_per_node = static_cast<int>(net.integer("nics_per_node").value_or(gpus_per_node));
  });
  net.field([&] { spec.nic_bandwidth = *net.number("nic_bandwidth"); });
  net.field([&] { spec.latency = *net.number("latency"); });
  net.field([&] { spec.oversubscription = *net.number("oversubscription"); });
  net.field([&] { spec.nodes_per_leaf = static_cast<int>(*net.integer("nodes_per_leaf")); });
  net.field([&] { spec.protocol_efficiency = *net.number("protocol_efficiency"); });
  net.field([&] { spec.pxn = *net.flag("pxn"); });
  net.field([&] { spec.planes = static_cast<int>(*net.integer("planes")); });
  net.field([&] { spec.tiers = static_cast<int>(*net.integer("tiers")); });
  net.field(
      [&] { spec.nodes_per_pod = static_cast<int>(net.integer("nodes_per_pod").value_or(0)); });
  net.field([&] { spec.pod_oversubscription = *net.number("pod_oversubscription"); });
  return spec;
}

StragglerSpec read_stragglers(const MapReader& m) {
  m.check_keys();
  StragglerSpec s;
  m.field([&] { s.gpu_clock_fraction = *m.number("gpu_clock_fraction"); });
  m.field([&] { s.gpu_rank = static_cast<int>(*m.integer("gpu_rank")); });
  m.field([&] { s.gpu_count = static_cast<int>(*m.integer("gpu_count")); });
  m.field([&] { s.nvlink_fraction = *m.number("nvlink_fraction"); });
  m.field([&] { s.nvlink_rank = static_cast<int>(*m.integer("nvlink_rank")); });
  m.field([&] { s.nic_fraction = *m.number("nic_fraction"); });
  m.field([&] { s.nic_rank = static_cast<int>(*m.integer("nic_rank")); });
  m.field([&] { s.background_traffic = *m.number("background_traffic"); });
  return s;
}

NcclSpec read_nccl(const MapReader& m) {
  m.check_keys();
  NcclSpec spec;
  m.field([&] {
    const std::string a = *m.text("algorithm");
    for (CollectiveAlgorithm v :
         {CollectiveAlgorithm::kAuto, CollectiveAlgorithm::kRing, CollectiveAlgorithm::kTree,
          CollectiveAlgorithm::kNvls, CollectiveAlgorithm::kNvlsTree}) {
      if (a == algorithm_name(v)) spec.algorithm = v;
    }
  });
  m.field([&] {
    const std::string p = *m.text("protocol");
    for (CollectiveProtocol v : {CollectiveProtocol::kAuto, CollectiveProtocol::kLL,
                                 CollectiveProtocol::kLL128, CollectiveProtocol::kSimple}) {
      if (p == protocol_name(v)) spec.protocol = v;
    }
  });
  for (CollectiveProtocol p :
       {CollectiveProtocol::kLL, CollectiveProtocol::kLL128, CollectiveProtocol::kSimple}) {
    const int i = static_cast<int>(p);
    const std::string name = protocol_name(p);
    m.field([&] { spec.base_latency[i] = *m.number(name + "_latency"); });
    m.field([&] { spec.step_latency[i] = *m.number(name + "_step_latency"); });
    if (p != CollectiveProtocol::kSimple) {
      m.field([&] { spec.bandwidth[i] = *m.number(name + "_bandwidth"); });
    }
  }
  m.field([&] { spec.tree_bandwidth = *m.number("tree_bandwidth"); });
  m.field([&] { spec.nvls_latency = *m.number("nvls_latency"); });
  m.field([&] { spec.pipeline_chunk = *m.number("pipeline_chunk"); });
  return spec;
}

// Reads an attention block (`efficiency.fused_attention`, `...flash_attention`, also inside a
// per-precision block) over `a`: a key not written keeps *a, which holds the struct's
// defaults (the table's) or, in a per-precision block, the 16-bit block's values.
void read_attention(const MapReader& m, AttentionEfficiency* a) {
  m.check_keys();
  const auto read = [&](const char* key, double* v) {
    m.field([&] { *v = m.number(key).value_or(*v); });
  };
  read("forward", &a->forward);
  read("backward", &a->backward);
  read("half_seq", &a->half_seq);
  read("backward_half_seq", &a->backward_half_seq);
  read("causal_seq", &a->causal_seq);
  read("half_head_dim", &a->half_head_dim);
}

// Reads the GEMM and attention keys shared by `efficiency` and its per-precision blocks.
void read_precision_efficiency(const MapReader& m, PrecisionEfficiency* e) {
  m.field([&] { e->gemm = m.number("gemm").value_or(e->gemm); });
  m.field([&] { e->gemm_half_flops = m.number("gemm_half_size").value_or(e->gemm_half_flops); });
  m.field([&] {
    if (auto a = m.opt_map("fused_attention")) read_attention(*a, &e->fused);
  });
  m.field([&] {
    if (auto a = m.opt_map("flash_attention")) read_attention(*a, &e->flash);
  });
  m.field([&] { e->in_training = m.number("in_training").value_or(e->in_training); });
}

// Returns the optional section `key` of `map`, or an empty map that takes every default.
MapReader section_or_defaults(const MapReader& map, const char* key) {
  static const YamlNode kEmptyMap = [] {
    YamlNode n;
    n.kind = YamlNode::Kind::kMap;
    return n;
  }();
  return map.opt_map(key).value_or(
      MapReader(kEmptyMap, map.key_path(key), map.where(), map.diagnostics()));
}

ReliabilitySpec read_reliability(const MapReader& cluster) {
  const MapReader m = section_or_defaults(cluster, "reliability");
  m.check_keys();
  ReliabilitySpec r;
  const std::pair<const char*, double*> keys[] = {
      {"gpu_mtbf", &r.gpu_mtbf_s},
      {"hbm_mtbf", &r.hbm_mtbf_s},
      {"host_mtbf", &r.host_mtbf_s},
      {"nic_mtbf", &r.nic_mtbf_s},
      {"switch_mtbf", &r.switch_mtbf_s},
      {"link_mtbf", &r.link_mtbf_s},
      {"software_mtbf", &r.software_mtbf_s},
      {"unplanned_maintenance_mtbf", &r.unplanned_maintenance_mtbf_s},
      {"planned_maintenance_mtbf", &r.planned_maintenance_mtbf_s},
      {"detection", &r.detection_s},
      {"scheduling", &r.scheduling_s},
      {"process_start", &r.process_start_s},
      {"nccl_init_per_gpu", &r.nccl_init_per_gpu_s},
  };
  for (const auto& key : keys) {
    m.field([&] { *key.second = *m.number(key.first); });
  }
  return r;
}

StorageSpec read_storage(const MapReader& cluster) {
  const MapReader m = section_or_defaults(cluster, "storage");
  m.check_keys();
  StorageSpec s;
  m.field([&] { s.write_bandwidth_per_node = *m.number("write_bandwidth_per_node"); });
  m.field([&] { s.read_bandwidth_per_node = *m.number("read_bandwidth_per_node"); });
  m.field([&] { s.write_bandwidth = *m.number("write_bandwidth"); });
  m.field([&] { s.read_bandwidth = *m.number("read_bandwidth"); });
  return s;
}

}  // namespace

GpuSpec read_gpu(const MapReader& gpu) {
  gpu.check_keys();
  GpuSpec spec;
  gpu.field([&] { spec.name = *gpu.text("name"); });

  gpu.field([&] {
    MapReader peaks = gpu.req_map("peak_flops");
    peaks.check_keys();
    bool failed = false;
    for (Precision p : {Precision::kBf16, Precision::kFp16, Precision::kFp8, Precision::kTf32,
                        Precision::kFp32, Precision::kFp4}) {
      failed |= !peaks.field([&] {
        if (auto v = peaks.number(precision_name(p))) {
          spec.peak_flops[p] = *v;
        }
      });
    }
    if (spec.peak_flops.empty() && !failed) {
      gpu.fail("peak_flops",
               "no peak given (expected at least one of bf16, fp16, fp8, tf32, fp32, fp4, e.g. "
               "`bf16: 312 TFLOPS`)");
    }
  });
  gpu.field([&] {
    const std::string arch = *gpu.text("architecture");
    for (GpuArchitecture a : {GpuArchitecture::kUnspecified, GpuArchitecture::kAmpere,
                              GpuArchitecture::kHopper, GpuArchitecture::kBlackwell}) {
      if (arch == architecture_name(a)) spec.architecture = a;
    }
  });
  gpu.field([&] { spec.memory_bytes = *gpu.number("memory"); });
  gpu.field([&] {
    if (const auto reserved = gpu.number("memory_reserved")) spec.memory_reserved_bytes = *reserved;
  });
  gpu.field([&] { spec.memory_bandwidth = *gpu.number("memory_bandwidth"); });

  gpu.field([&] {
    // Absent, the block takes every default of its table.
    static const YamlNode kEmptyMap = [] {
      YamlNode n;
      n.kind = YamlNode::Kind::kMap;
      return n;
    }();
    const MapReader eff = gpu.opt_map("efficiency")
                              .value_or(MapReader(kEmptyMap, gpu.key_path("efficiency"),
                                                  gpu.where(), gpu.diagnostics()));
    eff.check_keys();
    ComputeEfficiency& e = spec.efficiency;
    PrecisionEfficiency base{e.gemm, e.gemm_half_flops, e.fused, e.flash, e.in_training};
    read_precision_efficiency(eff, &base);
    e.gemm = base.gemm;
    e.gemm_half_flops = base.gemm_half_flops;
    e.fused = base.fused;
    e.flash = base.flash;
    e.in_training = base.in_training;
    eff.field([&] {
      if (auto a = eff.opt_map("flash2_attention")) {
        e.flash2 = e.flash;
        read_attention(*a, &e.flash2);
        e.has_flash2 = true;
      }
    });
    // A precision without its own block runs with the 16-bit parameters.
    for (Precision p : {Precision::kFp8, Precision::kFp4}) {
      eff.field([&] {
        if (auto block = eff.opt_map(precision_name(p))) {
          block->check_keys();
          PrecisionEfficiency pe = base;
          read_precision_efficiency(*block, &pe);
          e.by_precision[p] = pe;
        }
      });
    }
    eff.field([&] { e.memory = *eff.number("memory"); });
    eff.field([&] { e.kernel_overhead_s = *eff.number("kernel_overhead"); });
    eff.field([&] { e.sm_count = static_cast<int>(eff.integer("sm_count").value_or(0)); });
  });
  gpu.field([&] {
    auto clocks = gpu.opt_map("clocks");
    if (!clocks) return;
    clocks->check_keys();
    GpuClocks& c = spec.clocks;
    clocks->field([&] { c.quoted_hz = clocks->number("peak").value_or(0); });
    clocks->field([&] { c.boost_hz = clocks->number("boost").value_or(0); });
    clocks->field([&] { c.sustained_hz = clocks->number("sustained").value_or(0); });
    clocks->field([&] { c.power_limit_w = clocks->number("power_limit").value_or(0); });
    if (c.sustained_hz > 0 && c.quoted_hz == 0) {
      clocks->fail("sustained", "needs `peak`, the clock the peak_flops are quoted at");
    } else if (c.boost_hz > 0 && std::max(c.quoted_hz, c.sustained_hz) > c.boost_hz) {
      clocks->fail("boost", "is below `peak` or `sustained` (expected the maximum SM clock)");
    }
  });
  return spec;
}

ClusterSpec read_cluster(const MapReader& map) {
  const std::size_t before = map.problems();
  map.check_keys();
  ClusterSpec c;
  map.field([&] { c.name = *map.text("name"); });
  map.field([&] { c.gpu = read_gpu(map.req_map("gpu")); });
  bool sized = map.field([&] { c.nodes = static_cast<int>(*map.integer("nodes")); });
  sized &= map.field([&] { c.gpus_per_node = static_cast<int>(*map.integer("gpus_per_node")); });
  if (sized) {
    map.field([&] {
      const std::int64_t gpus = checked_mul(c.nodes, c.gpus_per_node);
      if (gpus > limits::kMaxGpus) {
        map.fail("nodes", "cluster has " + std::to_string(gpus) +
                              " GPUs (nodes × gpus_per_node), more than the limit of " +
                              std::to_string(limits::kMaxGpus));
      }
    });
  }
  map.field([&] { c.nvlink = read_nvlink(map.req_map("nvlink"), c.gpus_per_node); });
  map.field([&] { c.network = read_network(map.req_map("network"), c.gpus_per_node); });
  map.field([&] {
    // Absent, the section takes every default of its table.
    static const YamlNode kEmptyMap = [] {
      YamlNode n;
      n.kind = YamlNode::Kind::kMap;
      return n;
    }();
    c.nccl = read_nccl(map.opt_map("nccl").value_or(
        MapReader(kEmptyMap, map.key_path("nccl"), map.where(), map.diagnostics())));
  });
  map.field([&] {
    const std::optional<MapReader> host = map.opt_map("host");
    if (!host) return;
    host->check_keys();
    host->field([&] { c.host.memory_bandwidth = host->number("memory_bandwidth").value_or(0); });
    host->field([&] {
      c.host.host_to_device_bandwidth = host->number("host_to_device_bandwidth").value_or(0);
    });
    host->field([&] {
      c.host.device_to_host_bandwidth = host->number("device_to_host_bandwidth").value_or(0);
    });
  });
  map.field([&] { c.reliability = read_reliability(map); });
  map.field([&] { c.storage = read_storage(map); });
  map.field([&] {
    const std::optional<MapReader> m = map.opt_map("stragglers");
    if (m) c.stragglers = read_stragglers(*m);
  });
  map.field([&] {
    const std::optional<MapReader> m = map.opt_map("sites");
    if (!m) return;
    m->check_keys();
    m->field([&] { c.sites.count = static_cast<int>(*m->integer("count")); });
    m->field([&] { c.sites.wan_bandwidth = m->number("wan_bandwidth").value_or(0); });
    m->field([&] { c.sites.wan_latency = *m->number("wan_latency"); });
  });
  if (map.problems() == before) report_issues(map, cluster_issues(c), false);
  return c;
}

}  // namespace trident
