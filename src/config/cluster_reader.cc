// Conversion of the `cluster:` section (DESIGN.md "Cluster").
#include "config/section_readers.h"

namespace trident {
namespace {

NvlinkSpec read_nvlink(const MapReader& nv, int gpus_per_node) {
  nv.check_keys();
  NvlinkSpec spec;
  nv.field([&] {
    spec.island_size = static_cast<int>(
        nv.opt_int("island_size", 1, limits::kMaxIslandSize).value_or(gpus_per_node));
  });
  nv.field([&] {
    spec.bandwidth =
        nv.req_quantity("bandwidth", Dimension::kBandwidth, false, limits::kMaxLinkBandwidth);
  });
  nv.field([&] {
    spec.latency = nv.req_quantity("latency", Dimension::kTime, true, limits::kMaxLatency);
  });
  nv.field([&] {
    spec.protocol_efficiency = nv.opt_number("protocol_efficiency", 0, true, 1).value_or(1.0);
  });
  nv.field([&] {
    spec.in_switch_reduction_efficiency =
        nv.opt_number("in_switch_reduction_efficiency", 0, true, 1).value_or(0.0);
  });
  return spec;
}

NetworkSpec read_network(const MapReader& net, int gpus_per_node) {
  net.check_keys();
  NetworkSpec spec;
  net.field([&] {
    const std::string topology =
        net.opt_choice("topology", {"single-switch", "fat-tree"}).value_or("fat-tree");
    spec.topology = topology == "single-switch" ? Topology::kSingleSwitch : Topology::kFatTree;
  });
  net.field([&] {
    spec.nics_per_node = static_cast<int>(
        net.opt_int("nics_per_node", 1, limits::kMaxNicsPerNode).value_or(gpus_per_node));
  });
  net.field([&] {
    spec.nic_bandwidth =
        net.req_quantity("nic_bandwidth", Dimension::kBandwidth, false, limits::kMaxLinkBandwidth);
  });
  net.field([&] {
    spec.latency = net.req_quantity("latency", Dimension::kTime, true, limits::kMaxLatency);
  });
  net.field([&] {
    spec.oversubscription =
        net.opt_number("oversubscription", 1, false, limits::kMaxOversubscription).value_or(1.0);
  });
  net.field([&] {
    spec.nodes_per_leaf =
        static_cast<int>(net.opt_int("nodes_per_leaf", 1, limits::kMaxNodes).value_or(16));
  });
  net.field([&] {
    spec.protocol_efficiency = net.opt_number("protocol_efficiency", 0, true, 1).value_or(1.0);
  });
  return spec;
}

// Reads an attention block (`efficiency.fused_attention`, `...flash_attention`) over `a`.
void read_attention(const MapReader& m, AttentionEfficiency* a) {
  m.check_keys();
  const auto frac = [&](const char* key, double* v) {
    m.field([&] { *v = m.opt_number(key, 0, true, 1).value_or(*v); });
  };
  const auto length = [&](const char* key, double* v) {
    m.field([&] { *v = m.opt_number(key, 0, false, 1e7).value_or(*v); });
  };
  frac("forward", &a->forward);
  frac("backward", &a->backward);
  length("half_seq", &a->half_seq);
  length("backward_half_seq", &a->backward_half_seq);
  length("causal_seq", &a->causal_seq);
  length("half_head_dim", &a->half_head_dim);
}

// Reads the GEMM and attention keys shared by `efficiency` and its per-precision blocks.
void read_precision_efficiency(const MapReader& m, PrecisionEfficiency* e) {
  m.field([&] { e->gemm = m.opt_number("gemm", 0, true, 1).value_or(e->gemm); });
  m.field([&] {
    e->gemm_half_flops =
        m.opt_quantity("gemm_half_size", Dimension::kFlops, true, limits::kMaxGemmHalfFlops)
            .value_or(e->gemm_half_flops);
  });
  m.field([&] {
    if (auto a = m.opt_map("fused_attention")) read_attention(*a, &e->fused);
  });
  m.field([&] {
    if (auto a = m.opt_map("flash_attention")) read_attention(*a, &e->flash);
  });
}

}  // namespace

GpuSpec read_gpu(const MapReader& gpu) {
  gpu.check_keys();
  GpuSpec spec;
  gpu.field([&] { spec.name = gpu.req_string("name"); });

  gpu.field([&] {
    MapReader peaks = gpu.req_map("peak_flops");
    peaks.check_keys();
    bool failed = false;
    for (Precision p : {Precision::kBf16, Precision::kFp16, Precision::kFp8, Precision::kTf32,
                        Precision::kFp32, Precision::kFp4}) {
      failed |= !peaks.field([&] {
        if (auto v = peaks.opt_quantity(precision_name(p), Dimension::kFlopRate, false,
                                        limits::kMaxPeakFlops)) {
          spec.peak_flops[p] = *v;
        }
      });
    }
    if (spec.peak_flops.empty() && !failed) {
      gpu.fail("peak_flops",
               "no peak given (expected at least one of bf16, fp16, fp8, tf32, fp32, e.g. "
               "`bf16: 312 TFLOPS`)");
    }
  });
  gpu.field([&] {
    const std::string arch =
        gpu.opt_choice("architecture", {"unspecified", "ampere", "hopper", "blackwell"})
            .value_or("unspecified");
    for (GpuArchitecture a : {GpuArchitecture::kUnspecified, GpuArchitecture::kAmpere,
                              GpuArchitecture::kHopper, GpuArchitecture::kBlackwell}) {
      if (arch == architecture_name(a)) spec.architecture = a;
    }
  });
  gpu.field([&] {
    spec.memory_bytes = gpu.req_quantity("memory", Dimension::kBytes, false, limits::kMaxGpuMemory);
  });
  gpu.field([&] {
    spec.memory_bandwidth = gpu.req_quantity("memory_bandwidth", Dimension::kBandwidth, false,
                                             limits::kMaxMemoryBandwidth);
  });

  gpu.field([&] {
    auto eff = gpu.opt_map("efficiency");
    if (!eff) return;
    eff->check_keys();
    ComputeEfficiency& e = spec.efficiency;
    PrecisionEfficiency base{e.gemm, e.gemm_half_flops, e.fused, e.flash};
    read_precision_efficiency(*eff, &base);
    e.gemm = base.gemm;
    e.gemm_half_flops = base.gemm_half_flops;
    e.fused = base.fused;
    e.flash = base.flash;
    for (Precision p : {Precision::kFp8, Precision::kFp4}) {
      eff->field([&] {
        if (auto block = eff->opt_map(precision_name(p))) {
          block->check_keys();
          PrecisionEfficiency pe = base;
          read_precision_efficiency(*block, &pe);
          e.by_precision[p] = pe;
        }
      });
    }
    eff->field([&] { e.memory = eff->opt_number("memory", 0, true, 1).value_or(e.memory); });
    eff->field([&] {
      e.kernel_overhead_s =
          eff->opt_quantity("kernel_overhead", Dimension::kTime, true, limits::kMaxLatency)
              .value_or(e.kernel_overhead_s);
    });
    eff->field([&] {
      e.sm_count = static_cast<int>(eff->opt_int("sm_count", 1, 100000).value_or(e.sm_count));
    });
  });
  return spec;
}

ClusterSpec read_cluster(const MapReader& map) {
  const std::size_t before = map.problems();
  map.check_keys();
  ClusterSpec c;
  map.field([&] { c.name = map.req_string("name"); });
  map.field([&] { c.gpu = read_gpu(map.req_map("gpu")); });
  bool sized =
      map.field([&] { c.nodes = static_cast<int>(map.req_int("nodes", 1, limits::kMaxNodes)); });
  sized &= map.field([&] {
    c.gpus_per_node = static_cast<int>(map.req_int("gpus_per_node", 1, limits::kMaxGpusPerNode));
  });
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
  if (map.problems() == before) report_issues(map, cluster_issues(c), false);
  return c;
}

}  // namespace trident
