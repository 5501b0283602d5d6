// Step metrics (docs/report.md: their keys, src/report/metric_table.h) computed from a
// simulated Timeline. Pure; no SimGrid.
#ifndef TRIDENT_REPORT_METRICS_H_
#define TRIDENT_REPORT_METRICS_H_

#include <optional>
#include <string>
#include <vector>

#include "config/scenario.h"
#include "lowering/timeline.h"
#include "workload/stage_work.h"

namespace trident {

// Per pipeline stage, means over the stage's GPUs (seconds, each >= +0.0, never -0.0) and its
// memory (GiB).
struct StageReport {
  int stage = 0;
  int first_layer = 0;
  int num_layers = 0;
  double compute_s = 0;
  double tp_comm_exposed_s = 0;
  double pp_comm_exposed_s = 0;
  double dp_comm_exposed_s = 0;
  double dp_param_gather_exposed_s = 0;  // of dp_comm_exposed_s: waits on parameter gathers
  double cp_comm_exposed_s = 0;
  double ep_comm_exposed_s = 0;  // MoE dispatch and combine not hidden behind compute
  double offload_exposed_s = 0;  // optimizer CPU offload: the wait on the host
  double bubble_s = 0;
  double memory_gib = 0;
  double weights_gib = 0, gradients_gib = 0, optimizer_gib = 0, activations_gib = 0;
  double cp_buffers_gib = 0;        // context-parallel receive buffers
  double dispatch_buffers_gib = 0;  // MoE all-to-all buffers of one layer
  double logits_gib = 0;            // last stage: the 16-bit logits while the loss runs
  // What torch.cuda.max_memory_allocated would read: memory_gib and the cuBLAS workspaces.
  double allocated_gib = 0;
  // Besides the model's tensors (workload/reserved_memory.h): CUDA context, NCCL buffers and
  // userbuffers (outside PyTorch's allocator), and the workspaces (inside it); their sum is
  // reserved_gib (gpu.memory_reserved when given), and memory_gib + reserved_gib is what
  // nvidia-smi would read (device_gib).
  double cuda_context_gib = 0, nccl_gib = 0, userbuffers_gib = 0, workspaces_gib = 0;
  double reserved_gib = 0;
  double device_gib = 0;
  int microbatches_in_flight = 0;
  double host_optimizer_gib = 0;  // optimizer CPU offload: host memory per GPU
};

// One class of kernel on the explained stage (docs/explain.md), per step.
struct ExplainClass {
  std::string name;  // op_class_name: gemm, grouped_gemm, attention, memory, optimizer, ...
  double kernels = 0;
  double seconds = 0;  // without the per-kernel overhead (its own class, kernel_overhead)
  double flops = 0;    // tensor-core classes
  double bytes = 0;    // memory-bound classes: HBM bytes moved
  // flops / (seconds x the dense peak of each kernel's precision), tensor-core classes; bytes
  // / (seconds x HBM bandwidth), memory-bound ones. Unset where the class has no seconds, or
  // does not apply (kernel_overhead has neither).
  std::optional<double> fraction_of_peak;
  std::optional<double> fraction_of_hbm_bandwidth;
};

// Where the step goes against the roofline (docs/explain.md): the busiest stage's compute by
// class of kernel; the exposed communication and memory terms are the Report's and the
// fullest stage's.
struct Explain {
  int stage = 0;         // the stage with the most compute seconds (the first of equals)
  double compute_s = 0;  // its compute_s (StageReport); the classes' seconds sum to it
  std::vector<ExplainClass> compute;  // every OpClass, in its order
  int memory_stage = 0;  // the fullest GPU's stage: largest device_gib (tensors and reserve)
};

struct Report {
  std::string scenario;
  std::string cluster;
  std::string model;
  std::string schedule;
  std::string fidelity;
  int tensor = 1, pipeline = 1, data = 1, context = 1;
  int gpus = 0;
  int cluster_gpus = 0;  // the cluster's; a plan may use fewer
  int seq_length = 0;
  int micro_batch_size = 0;
  int global_batch_size = 0;
  int num_microbatches = 0;
  int virtual_stages = 1;

  double step_time_s = 0;
  // Times and fractions below are >= +0.0 (never -0.0): rounding noise below zero reads 0.
  double bubble_fraction = 0;        // mean over GPUs of (step - compute - exposed comm) / step
  double ideal_bubble_fraction = 0;  // (p-1)/(m+p-1)
  double compute_utilization = 0;
  double mfu = 0;  // against the dense peak of `mfu_peak` (bf16 unless the GPU has none)
  double hfu = 0;
  std::string mfu_peak = "bf16";
  std::string precision = "bf16";  // the run's (plan.precision)
  double mfu_run_precision = 0;    // model FLOPs against the run precision's dense peak
  std::string attention_backend;   // resolved plan.attention_backend
  double model_tflops_per_gpu = 0;
  double tokens_per_s = 0;
  double tp_comm_exposed_s = 0;
  double pp_comm_exposed_s = 0;
  double dp_comm_exposed_s = 0;
  // Of dp_comm_exposed_s: compute waiting on parameter all-gathers that run behind it
  // (overlap_param_gather buckets, optim_grads_params per-layer gathers).
  double dp_param_gather_exposed_s = 0;
  // Context-parallel ring transfers the attention blocks beside them did not hide.
  double cp_comm_exposed_s = 0;
  double ep_comm_exposed_s = 0;
  // Optimizer CPU offload (plan.optimizer_cpu_offload): the optimizer step's wait on the
  // host's copies and CPU step, and the stage with the most offloaded parameters' work.
  double optimizer_offload_exposed_s = 0;
  std::optional<OptimizerOffload> optimizer_offload;
  double peak_memory_gib = 0;
  double memory_reserved_gib = 0;  // the fullest GPU's reserve (StageReport::reserved_gib)
  // HBM left on the fullest GPU: memory - reserved - peak (negative: does not fit).
  double memory_margin_gib = 0;
  bool fits_in_memory = true;  // memory_margin_gib >= 0
  double model_flops_per_step = 0;
  double hardware_flops_per_step = 0;
  double parameters = 0;
  // Mixtures of experts (equal to parameters, and MFU on Megatron's formula, for dense models):
  // the parameters one token uses; MFU of Megatron-LM's num_floating_point_operations, which
  // counts the routed experts a token visits (active parameters) and the causal half of
  // attention, against the `mfu_peak` dense peak; tokens per expert per micro-batch over an
  // expert-parallel group, balanced (mean) and on the busiest expert (max; 0 when dense).
  double active_params = 0;
  double mfu_active = 0;
  double tokens_per_expert_mean = 0;
  double tokens_per_expert_max = 0;
  bool moe = false;
  int expert_parallel = 1;
  unsigned long long sim_activities = 0;
  // The whole training run (plan.train_tokens, plan.gpu_hour_price); unset when not given.
  std::optional<double> train_tokens;
  std::optional<double> train_days;  // train_tokens / tokens per step × step time, in days
  std::optional<double> gpu_hours;   // × GPUs used
  std::optional<double> cost;        // gpu_hours × gpu_hour_price
  std::vector<StageReport> stages;
  Explain explain;
};

// Builds the report of one simulated step. Requires a timeline produced for this scenario.
Report make_report(const Scenario& scenario, const Workload& workload, const Timeline& timeline,
                   const std::string& fidelity);

}  // namespace trident

#endif  // TRIDENT_REPORT_METRICS_H_
