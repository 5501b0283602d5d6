// The reliability sections of the settings table (config/settings_rows.h): failure rates and
// checkpoint storage for `trident goodput`, and stragglers.
#include "config/limits.h"
#include "config/settings_rows.h"

namespace trident {
namespace {

// Failure rates and checkpoint storage for `trident goodput` (docs/goodput.md). Defaults: the
// Llama 3 405B run, 466 interruptions in 54 days (1296 h) on 16,384 H100 in 2,048 nodes (Dubey
// et al. 2024, "The Llama 3 Herd of Models", Table 5), turned into a mean time between failures
// per component: component-hours / interruptions of that cause.
void append_goodput_sections(std::vector<SettingSection>* out) {
  using D = Dimension;
  constexpr double kMaxMtbf = 1e13;  // s: ~300,000 years
  const auto mtbf = [&](const char* key, const char* value, const char* doc) {
    return def(quantity(key, D::kTime, 1, kMaxMtbf, doc), value);
  };
  const auto cost = [&](const char* key, const char* value, const char* doc) {
    return def(quantity(key, D::kTime, 0, 1e6, doc), value);
  };
  out->push_back(
      {"cluster.reliability",
       "Mean time between job-interrupting failures per component, and what a restart costs "
       "(docs/goodput.md). A job's components are counted from the cluster's shape.",
       {
           mtbf("gpu_mtbf", "108000 h",
                "Per GPU: faulty GPU, SRAM, system processor, thermal interface, silent data "
                "corruption (Llama 3: 148 + 19 + 17 + 6 + 6 = 196 in 21.2M GPU-hours)."),
           mtbf("hbm_mtbf", "295000 h", "Per GPU: HBM (Llama 3: 72 in 21.2M GPU-hours)."),
           mtbf("host_mtbf", "190000 h",
                "Per node: CPU, system memory, power supply, chassis, IO board, SSD (Llama 3: "
                "2 + 2 + 3 + 2 + 2 + 3 = 14 in 2.65M node-hours)."),
           mtbf("nic_mtbf", "3030000 h", "Per NIC (Llama 3: 7 in 21.2M NIC-hours)."),
           mtbf("switch_mtbf", "56900 h",
                "Per fabric switch (Llama 3: half of the 35 switch/cable interruptions over its "
                "768 switches, counted as docs/goodput.md says)."),
           mtbf("link_mtbf", "2430000 h",
                "Per fabric cable (the other half of the 35 over 32,768 cables)."),
           mtbf("software_mtbf", "337000 h",
                "Per GPU (rank): software bugs, NCCL watchdog timeouts, dependencies (Llama 3: "
                "54 + 7 + 2 = 63 in 21.2M GPU-hours)."),
           mtbf("unplanned_maintenance_mtbf", "82900 h",
                "Per node: unplanned host maintenance (Llama 3: 32 in 2.65M node-hours)."),
           mtbf("planned_maintenance_mtbf", "56500 h",
                "Per node: planned interruptions, firmware upgrades and operator changes, which "
                "save a checkpoint first and lose no work (Llama 3: 47 in 2.65M node-hours)."),
           cost("detection", "2 min",
                "From a failure to the job being stopped: most failures crash a process at once; "
                "hangs wait for the NCCL watchdog (PyTorch's default timeout: 10 min)."),
           cost("scheduling", "3 min",
                "Requeue, replace or drain the failed node and allocate the job again."),
           cost("process_start", "2 min",
                "Container and Python start, imports, CUDA context, dataloader workers."),
           cost("nccl_init_per_gpu", "5 ms",
                "Communicator set-up grows with the ranks (NCCL's bootstrap all-gathers every "
                "rank's address): this much per GPU of the job (82 s at 16,384)."),
       }});
  out->push_back(
      {"cluster.storage",
       "The file system checkpoints are written to and read from (docs/goodput.md).",
       {
           def(quantity("write_bandwidth_per_node", D::kBandwidth, kMinLinkBandwidth,
                        limits::kMaxMemoryBandwidth,
                        "Checkpoint write bandwidth of one node: its storage NICs (DGX H100: two "
                        "200 Gb/s ports) at what a parallel file system sustains per client."),
               "20 GB/s"),
           def(quantity("read_bandwidth_per_node", D::kBandwidth, kMinLinkBandwidth,
                        limits::kMaxMemoryBandwidth, "Checkpoint read bandwidth of one node."),
               "40 GB/s"),
           def(quantity("write_bandwidth", D::kBandwidth, kMinLinkBandwidth,
                        limits::kMaxMemoryBandwidth,
                        "Aggregate write cap of the file system (Llama 3's Tectonic: 2 TB/s "
                        "sustained over 7,500 servers)."),
               "2 TB/s"),
           def(quantity("read_bandwidth", D::kBandwidth, kMinLinkBandwidth,
                        limits::kMaxMemoryBandwidth,
                        "Aggregate read cap (Llama 3's Tectonic: 7 TB/s peak)."),
               "7 TB/s"),
       }});
}

}  // namespace

void append_reliability_sections(std::vector<SettingSection>* out) {
  append_goodput_sections(out);
  // Stragglers (docs/stragglers.md): every default means none, and the step is as without them.
  const auto fraction = [](const char* key, const char* doc) {
    return def(number(key, kMinEfficiency, 1, doc), "1");
  };
  const auto rank = [](const char* key, const char* doc) {
    return def(integer(key, 0, limits::kMaxGpus - 1, doc), "0");
  };
  out->push_back(
      {"cluster.stragglers",
       "GPUs and links slower than their peers; the slowest rank sets the pace of every "
       "collective and pipeline edge it is on.",
       {
           fraction("gpu_clock_fraction",
                    "Clock of each slow GPU as a fraction of its peers' (thermal or power "
                    "throttling): its kernels, HBM-bound ones included, take 1 / fraction as "
                    "long."),
           rank("gpu_rank",
                "The first slow GPU: its index, node by node (the global rank unless "
                "plan.gpus_per_island leaves GPUs out)."),
           def(integer("gpu_count", 1, limits::kMaxGpus,
                       "Slow GPUs: from gpu_rank, spaced (GPUs the plan spans / gpu_count) apart."),
               "1"),
           fraction("nvlink_fraction",
                    "Bandwidth of one GPU's NVLink (both directions) as a fraction of nominal."),
           rank("nvlink_rank", "Global rank of the GPU whose NVLink is degraded."),
           fraction("nic_fraction",
                    "Bandwidth of one NIC (both directions) as a fraction of nominal."),
           rank("nic_rank", "Global rank of a GPU that uses the degraded NIC."),
           def(number("background_traffic", 0, 0.99,
                      "Fraction of each inter-node fabric link's capacity (NICs and leaf "
                      "uplinks) that other jobs' traffic takes."),
               "0"),
       }});
}

}  // namespace trident
