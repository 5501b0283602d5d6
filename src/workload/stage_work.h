// The work of one pipeline stage, per tensor-parallel rank, reduced to what the engine runs:
// for each model chunk it holds, forward and backward passes made of segments (compute, then a
// tensor-parallel collective); the optimizer step; the gradient traffic of data parallelism;
// and memory.
#ifndef TRIDENT_WORKLOAD_STAGE_WORK_H_
#define TRIDENT_WORKLOAD_STAGE_WORK_H_

#include <vector>

#include "config/scenario.h"
#include "core/collective_op.h"
#include "layout/program.h"
#include "workload/compute_classes.h"
#include "workload/optimizer_offload.h"
#include "workload/reserved_memory.h"

namespace trident {

// `layer` values of a segment that are not a layer index.
constexpr int kLayerEmbedding = -1;  // the embedding's collective (first chunk of the model)
constexpr int kLayerOutput = -2;     // the output layer's collective (last chunk)
constexpr int kLayerUnknown = -3;    // no collective, or not known

// One step of the context-parallel ring: `bytes` per GPU sent to the next CP rank (and as
// many received from the previous one) while `compute_s` of attention runs; the step ends when
// both are done. bytes 0: the block alone; compute_s 0: a transfer nothing hides.
struct RingStep {
  double bytes = 0;
  double compute_s = 0;
};

// The context-parallel ring steps (none without context parallelism), then compute, then a
// collective of `tp_bytes` (the full buffer) over the TP group (none when 0 or t = 1), during
// which `overlap_s` more compute runs on the same GPU.
struct Segment {
  double compute_s = 0;
  double tp_bytes = 0;
  CollectiveOp tp_op = CollectiveOp::kAllReduce;
  double overlap_s = 0;
  // Backward passes: parameters whose gradients are complete once this segment ends (a layer's
  // backward ends here). Data-parallel gradient buckets fill from these.
  double grad_params = 0;
  // MoE layers: their routed experts' parameters with complete gradients here, reduced over
  // the expert-data-parallel group in buckets of their own (Megatron-Core's DDP keeps expert
  // parameters in separate buckets, megatron/core/distributed/distributed_data_parallel.py).
  double expert_grad_params = 0;
  // The layer whose collective closes this segment (or a kLayer* value).
  int layer = kLayerUnknown;
  // plan.tp_comm_overlap: how the collective runs beside overlap_s (a GEMM), in `tp_splits`
  // chunks (pipeline), with the GEMM `overlap_stretch` times slower while communication
  // kernels hold SMs (workload/tp_overlap.h).
  TpOverlap tp_overlap = TpOverlap::kNone;
  int tp_splits = 0;
  double overlap_stretch = 1;
  // Passes with per-layer parameter gathers (overlap_param_gather, optim_grads_params):
  // parameters whose weights this segment is the first to use.
  double weight_params = 0;
  // optim_grads_params with experts reduced apart: routed-expert parameters whose weights this
  // segment is the first to use, gathered over the expert-data-parallel group after the
  // weight_params of the same layer (Megatron-FSDP's expert parameter group of the unit).
  double expert_weight_params = 0;
  std::vector<RingStep> ring;  // runs first, before compute_s
  // The collective runs over the expert-parallel group (tp_bytes: bytes per GPU of a MoE
  // dispatch or combine, moe_ops.h), not the TP group; `combine`: the busiest rank sends most.
  bool expert = false;
  bool combine = false;
};

// One forward or backward pass of one micro-batch through one chunk, on one TP rank.
struct Pass {
  std::vector<Segment> segments;
  double compute_s = 0;    // sum of compute_s + overlap_s
  double flops = 0;        // FLOPs executed (hardware FLOPs)
  double model_flops = 0;  // FLOPs of the model itself (no recomputation)
  int collectives = 0;     // TP collectives in the pass
  double tp_bytes = 0;     // their summed buffers
  int ring_steps = 0;      // context-parallel ring steps with a transfer
  double cp_bytes = 0;     // their summed bytes per GPU
  int ep_collectives = 0;  // expert-parallel collectives (MoE dispatch and combine)
  double ep_bytes = 0;     // their summed bytes per GPU
  // compute_s by class of kernel, with FLOPs and bytes (docs/explain.md); sums to compute_s.
  ComputeClasses classes;
};

// A contiguous run of layers a stage holds (one of its `virtual_stages` chunks).
struct ChunkWork {
  int first_layer = 0;
  int num_layers = 0;
  bool has_embedding = false;  // the model's first chunk
  bool has_output = false;     // the model's last chunk (logits, loss)
  Pass forward;
  Pass backward;
  double params_per_gpu = 0;
  double activation_bytes = 0;  // kept per micro-batch for the backward pass
};

struct StageMemory {
  double weights = 0, gradients = 0, optimizer = 0;  // bytes per GPU
  double activations = 0;          // peak bytes of activations in flight under the schedule
  int microbatches_in_flight = 0;  // peak (micro-batch, chunk) forwards awaiting backward
  // Context parallelism: the ring's receive buffers while a layer's attention runs (two K/V
  // blocks and two dK/dV blocks, double-buffered as Transformer Engine's p2p_comm_buffers).
  double cp_buffers = 0;
  double dispatch_buffers = 0;  // MoE: one layer's all-to-all send and receive buffers
  // fp32 main gradients the distributed optimizer holds during its step only (bf16 reduction,
  // fp32 main_grads_dtype); not in total(): build_workload adds what exceeds the activations
  // to `gradients`.
  double step_main_grads = 0;
  // The last stage's 16-bit logits of the micro-batch whose loss runs, alive beside the fp32
  // copy the cross-entropy keeps (activations hold that copy per micro-batch in flight).
  double logits_transient = 0;
  // What the GPU holds besides these tensors (CUDA context, NCCL, userbuffers, workspaces).
  ReservedMemory reserved;
  // Optimizer CPU offload: host memory its offloaded optimizer state holds (not in total()).
  double host_optimizer = 0;
  // The model's tensors at the peak: what PyTorch's caching allocator holds for them.
  double total() const {
    return weights + gradients + optimizer + activations + cp_buffers + dispatch_buffers +
           logits_transient;
  }
  // torch.cuda.max_memory_allocated: the model's tensors and the cuBLAS workspaces.
  double allocated() const { return total() + reserved.workspaces; }
  // The GPU's whole use at the peak (nvidia-smi): total() and the reserve.
  double device_total() const { return total() + reserved.total(); }
};

struct StageWork {
  std::vector<ChunkWork> chunks;
  int num_layers = 0;      // over all chunks
  double optimizer_s = 0;  // optimizer step on this GPU's (shard of) parameters
  // plan.optimizer_cpu_offload: the share of the step on the host (optimizer_s is the GPU's).
  OptimizerOffload offload;
  double params_per_gpu = 0;
  double grad_bytes = 0;          // gradient bytes this GPU reduces over its DP (x CP) group
  double param_gather_bytes = 0;  // distributed optimizer: updated weights all-gathered
  double p2p_bytes = 0;           // bytes one GPU sends to a neighbour per micro-batch and chunk
  double grad_bucket_params = 0;  // parameters per DP gradient bucket (overlap_grad_reduce)
  // Parameters per expert gradient bucket: grad_bucket_params, or with optim_grads_params one
  // MoE layer's routed experts (each FSDP unit's expert gradients reduce-scattered at once).
  double expert_grad_bucket_params = 0;
  // MoE: the routed experts' share of params_per_gpu (E / EP experts of each MoE layer, split
  // over t); their gradients reduce over the expert-data-parallel group (d / EP GPUs), not
  // with grad_bytes, and their distributed-optimizer gather runs over it too.
  double expert_params_per_gpu = 0;
  double expert_grad_bytes = 0;
  double expert_param_gather_bytes = 0;
  // The compute of one step on this stage's GPUs by class of kernel: each chunk's passes times
  // the micro-batches, plus the optimizer step; sums to the compute seconds the engine runs.
  ComputeClasses compute;
  StageMemory memory;
};

struct Workload {
  std::vector<StageWork> stages;
  double total_params = 0;
  double model_flops_per_step = 0;     // all GPUs, one global batch
  double hardware_flops_per_step = 0;  // with recomputation
  // Parameters one token uses (moe_model.h active_params; = total_params for dense models),
  // and Megatron-LM's num_floating_point_operations for one global batch.
  double active_params = 0;
  double megatron_flops_per_step = 0;
  // MoE: tokens per expert per micro-batch over its EP group, balanced and busiest.
  double tokens_per_expert_mean = 0;
  double tokens_per_expert_max = 0;
};

// Builds the per-stage work of `scenario` from the Megatron cost model (layer_ops.h) timed by
// the GPU's compute model, with activation memory from the peak of `programs`. Requires a
// validated scenario and `programs` = build_programs(scenario.plan).
Workload build_workload(const Scenario& scenario, const std::vector<StageProgram>& programs);
// As above, building the programs itself (for callers that do not run them).
Workload build_workload(const Scenario& scenario);

// Returns the HBM left on the fullest GPU of `workload`: memory - the largest
// StageMemory::device_total() (the stage's tensors and its reserve; negative: it does not fit).
// The report's fits verdict and `trident plan`'s memory filter both use it.
double memory_margin_bytes(const ClusterSpec& cluster, const Workload& workload);

// Returns the layers of each virtual stage (plan.pipeline_layers, or an even split).
std::vector<int> virtual_stage_layers(const ModelSpec& model, const PlanSpec& plan);

// Returns the activation bytes one layer keeps per micro-batch under torchtitan's op-level
// selective recomputation (stack.selective_recompute: alternate_matmuls): the layer's input,
// the outputs of every other matmul (wq, wv, w1, w2) and the attention's output, 16-bit.
double alternate_matmul_activation_bytes(const ModelSpec& m, const PlanSpec& p);

// Returns the parameter count of one transformer layer (whole layer, not a TP shard).
double layer_params(const ModelSpec& model);
// Returns the model's parameter count (embeddings counted once).
double model_params(const ModelSpec& model);
// Returns the activation bytes one layer keeps for backward (Korthikanti et al. 2022), with
// the attention core as the backend resolved on `arch` keeps it and dropout masks only for
// dropout > 0; under context parallelism for the rank's seq_length / cp tokens.
double layer_activation_bytes(const ModelSpec& model, const PlanSpec& plan,
                              GpuArchitecture arch = GpuArchitecture::kUnspecified);
// Returns the bytes of layer_activation_bytes that the dense MLP's activation and FC2 keep:
// the FC1 output (g f / t wide, g = 2 gated) at 2 B and the FC2 input (f / t) at 2 B, or 1 B and
// its scales under fp8; 0 under full recomputation.
double dense_mlp_activation_bytes(const ModelSpec& model, const PlanSpec& plan);
// Returns the optimizer's bytes per parameter of master weights: state_dtype_bytes of
// main_params_dtype, or 2 where the precision-aware optimizer stores fp32 masters as remainders
// of bf16 parameters.
double master_param_bytes(const PlanSpec& plan);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_STAGE_WORK_H_
