#include "workload/stage_work.h"

#include <algorithm>
#include <vector>

#include "layout/program.h"
#include "workload/compute_model.h"
#include "workload/cp_attention.h"
#include "workload/layer_activations.h"
#include "workload/layer_kernels.h"
#include "workload/layer_ops.h"
#include "workload/model_shares.h"
#include "workload/moe_model.h"
#include "workload/moe_ops.h"
#include "workload/mtp.h"
#include "workload/nvfp4.h"
#include "workload/pass_segments.h"
#include "workload/pass_timing.h"
#include "workload/stage_memory.h"

namespace trident {

namespace {

// Megatron's default gradient bucket: max(40M, 1M x data-parallel size) parameters.
constexpr double kBucketParams = 40e6;
constexpr double kBucketParamsPerReplica = 1e6;

// What a stage's chunks add up to for its optimizer step and memory.
struct StageTally {
  // Transformer-layer parameters whose linear layers run at the plan's precision, and those
  // first_last_layers_bf16 keeps in BF16.
  double low_params = 0, bf16_params = 0;
  // The stage's smallest and largest FSDP unit reduced over d cp, and its largest experts'.
  double min_unit = 0, max_unit = 0, max_expert_unit = 0;
  bool any_layer = false;
  // Embedding, final norm and output layer: never cast to FP8 (the word embedding is a
  // lookup, the output layer a BF16 ColumnParallelLinear, M models/gpt/gpt_model.py:272-276).
  double st_16bit_params = 0;
};

// One chunk's parameters per GPU, of them its routed experts reduced apart, and its MoE layers.
struct ChunkParams {
  double params = 0, expert_params = 0;
  int moe_layers = 0;
};

// Per-layer parameter gathers: each layer's forward (and, with sharded weights, its backward)
// first waits for its weights, `n` of them gathered over d cp when `gather`; `x`: the layer's
// routed experts reduced apart, gathered over the expert-data group when `gather_experts`.
void gather_weights(bool gather, bool gather_experts, double n, double x, Pass* pass) {
  x = gather_experts ? x : 0;
  if (gather || x > 0) weights_needed(gather ? n : 0, x, pass);
}

// Returns the parameters of the transformer layers of `ch`, adds their activations to it and
// their parameters and FSDP units to `tally`.
ChunkParams tally_layers(const ModelSpec& model, const ModelShares& ms, ModelKernels* kernels,
                         ChunkWork* ch, StageTally* tally) {
  ChunkParams sums;
  for (int l = 0; l < ch->num_layers; ++l) {
    const bool moe = model.is_moe_layer(ch->first_layer + l);
    sums.moe_layers += moe ? 1 : 0;
    const LayerKernels& k = kernels->of(ch->first_layer + l);
    ch->activation_bytes += moe ? k.act_moe : k.act;
    (kernels->is_bf16(ch->first_layer + l) ? tally->bf16_params : tally->low_params) +=
        moe ? ms.moe_layer_params : ms.per_layer_params;
    sums.params += moe ? ms.moe_layer_params : ms.per_layer_params;
    sums.expert_params += moe ? ms.apart_params : 0;
    // FSDP units: the layer's parameters reduced over d cp, and its experts apart.
    const double unit = moe ? ms.moe_layer_params - ms.apart_params : ms.per_layer_params;
    tally->min_unit = tally->any_layer ? std::min(tally->min_unit, unit) : unit;
    tally->any_layer = true;
    tally->max_unit = std::max(tally->max_unit, unit);
    if (moe) tally->max_expert_unit = std::max(tally->max_expert_unit, ms.apart_params);
  }
  return sums;
}

// Builds the forward pass of `ch` (virtual stage `vs`), with `out` and `embed` the parameters
// of its output layer and embedding.
void build_forward(const Scenario& sc, const ModelShares& ms, ModelKernels* kernels, int vs,
                   double out, double embed, ChunkWork* ch) {
  const ModelSpec& model = sc.model;
  const PlanSpec& plan = sc.plan;
  const LayerKernels& low = kernels->low;
  const LayerDims& dims = low.dims;
  const PassTiming& cm = low.tm;
  // The stack's kernels for the embedding and output layer (the layers' are in LayerKernels).
  const auto stack_ops = [&](std::vector<Op> ops) { return stack_kernels(ops, dims, model, plan); };
  const auto fwd_weights = [&](double n, double x) {
    gather_weights(ms.gather_fwd, ms.gather_experts_fwd, n, x, &ch->forward);
  };
  if (ch->has_embedding) {
    fwd_weights(embed, 0);
    append_ops(stack_ops(embedding_forward_ops(dims)), cm, plan.tensor, kLayerEmbedding,
               &ch->forward);
  }
  for (int l = 0; l < ch->num_layers; ++l) {
    const int layer = ch->first_layer + l;
    const bool moe = model.is_moe_layer(layer);
    fwd_weights(moe ? ms.moe_layer_params - ms.apart_params : ms.per_layer_params,
                moe ? ms.apart_params : 0);
    const LayerKernels& k = kernels->of(layer);
    append_ops(moe ? k.moe_fwd : k.fwd, k.tm, plan.tensor, layer, &ch->forward);
  }
  // Megatron's GPTModel._postprocess runs the MTP block before the output layer.
  const bool mtp_here = vs == ms.mtp_vs;
  for (int k = 0; mtp_here && k < model.mtp_num_layers; ++k) {
    const int layer = model.num_layers + k;
    fwd_weights(ms.mtp_depth - ms.mtp_apart, ms.mtp_apart);
    append_ops(stack_ops(mtp_head_forward_ops(dims)), cm, plan.tensor, layer, &ch->forward);
    append_ops(ms.mtp_moe ? low.moe_fwd : low.fwd, low.tm, plan.tensor, layer, &ch->forward);
    append_ops(stack_ops(output_forward_ops(dims)), cm, plan.tensor, kLayerOutput, &ch->forward);
  }
  if (ch->has_output) {
    fwd_weights(out, 0);
    append_ops(stack_ops(output_forward_ops(dims)), cm, plan.tensor, kLayerOutput, &ch->forward);
  }
  finish_pass(&ch->forward);
}

// Builds the backward pass of `ch` (virtual stage `vs`, of stage `st`), with `out` and `embed`
// the parameters of its output layer and embedding, adding the parameters it holds besides
// its transformer layers to `chunk` and `tally`. Returns the FLOPs it recomputes.
double build_backward(const Scenario& sc, const ModelShares& ms, ModelKernels* kernels, int vs,
                      double out, double embed, ChunkWork* ch, StageWork* st, ChunkParams* chunk,
                      StageTally* tally) {
  const ModelSpec& model = sc.model;
  const PlanSpec& plan = sc.plan;
  const LayerKernels& low = kernels->low;
  const LayerDims& dims = low.dims;
  const PassTiming& cm = low.tm;
  const auto stack_ops = [&](std::vector<Op> ops) { return stack_kernels(ops, dims, model, plan); };
  const auto bwd_weights = [&](double n, double x) {
    gather_weights(ms.gather_bwd, ms.gather_experts_bwd, n, x, &ch->backward);
  };
  double& params = chunk->params;
  if (ch->has_output) {
    bwd_weights(out, 0);
    append_ops(stack_ops(output_backward_ops(dims)), cm, plan.tensor, kLayerOutput, &ch->backward);
    grads_done(out, 0, &ch->backward);
    params += out;
    tally->st_16bit_params += out;
  }
  const bool mtp_here = vs == ms.mtp_vs;
  double mtp_recompute_flops = 0, local_recomputed = 0;
  int local_layers = 0, local_moe_layers = 0;
  for (int k = model.mtp_num_layers - 1; mtp_here && k >= 0; --k) {
    const int layer = model.num_layers + k;
    bwd_weights(ms.mtp_depth - ms.mtp_apart, ms.mtp_apart);
    append_ops(stack_ops(output_backward_ops(dims)), cm, plan.tensor, kLayerOutput, &ch->backward);
    if (plan.recompute == Recompute::kFull) {
      // MultiTokenPredictionLayer._checkpointed_forward re-runs eh_proj and the layer.
      const std::vector<Op> head = stack_ops(mtp_head_forward_ops(dims, false));
      append_ops(head, cm, plan.tensor, layer, &ch->backward);
      mtp_recompute_flops += gemm_flops(head);
    }
    const std::vector<Op>& again = ms.mtp_moe ? low.moe_recompute : low.recompute;
    append_ops(again, low.tm, plan.tensor, layer, &ch->backward);
    mtp_recompute_flops += gemm_flops(again);
    append_ops(ms.mtp_moe ? low.moe_bwd : low.bwd, low.tm, plan.tensor, layer, &ch->backward);
    append_ops(stack_ops(mtp_head_backward_ops(dims)), cm, plan.tensor, layer, &ch->backward);
    grads_done(ms.mtp_depth - ms.mtp_apart, ms.mtp_apart, &ch->backward);
    params += ms.mtp_depth;
    chunk->expert_params += ms.mtp_apart;
    tally->low_params += ms.mtp_depth;
    const double unit = ms.mtp_depth - ms.mtp_apart;
    tally->min_unit = tally->any_layer ? std::min(tally->min_unit, unit) : unit;
    tally->any_layer = true;
    tally->max_unit = std::max(tally->max_unit, unit);
    tally->max_expert_unit = std::max(tally->max_expert_unit, ms.mtp_apart);
    ch->activation_bytes += mtp_depth_activation_bytes(
        model, plan, ms.mtp_moe ? low.act_moe : low.act, saved_linear_input_bytes(plan));
  }
  if (mtp_here) {
    // The MTP stage embeds the shifted tokens and computes logits itself: GPTModel builds
    // the word embedding and the output layer where mtp_process holds
    // (megatron/core/models/gpt/gpt_model.py), so away from the first (last) stage it
    // holds a copy; tied, the one matrix serves both.
    const bool tied = !model.untie_embeddings_and_output_weights;
    const double word = ch->has_embedding || (tied && ch->has_output) ? 0 : ms.vocab_params;
    const double copies = word + (ch->has_embedding ? 0 : ms.pos_params) +
                          (ch->has_output || tied ? 0 : ms.vocab_params);
    grads_done(copies, 0, &ch->backward);
    params += copies;
    tally->st_16bit_params += copies;
    if (ms.mtp_moe) st->memory.dispatch_buffers = moe_dispatch_buffer_bytes(model, plan);
    st->memory.logits_transient = ms.tokens * double(model.vocab_size) / ms.t * 2;
  }
  for (int l = 0; l < ch->num_layers; ++l) {
    // Backward runs the chunk's layers last to first.
    const int layer = ch->first_layer + ch->num_layers - 1 - l;
    const bool moe = model.is_moe_layer(layer);
    bwd_weights(moe ? ms.moe_layer_params - ms.apart_params : ms.per_layer_params,
                moe ? ms.apart_params : 0);
    const LayerKernels& k = kernels->of(layer);
    append_ops(moe ? k.moe_recompute : k.recompute, k.tm, plan.tensor, layer, &ch->backward);
    // Local layers' recomputed FLOPs are their own; the plain ones are counted below.
    if (kernels->is_local(k)) {
      local_recomputed += gemm_flops(moe ? k.moe_recompute : k.recompute);
      ++local_layers;
      local_moe_layers += moe ? 1 : 0;
    }
    append_ops(moe ? k.moe_bwd : k.bwd, k.tm, plan.tensor, layer, &ch->backward);
    // Buckets carry the gradients data parallelism reduces; the experts' reduce apart.
    grads_done(moe ? ms.moe_layer_params - ms.apart_params : ms.per_layer_params,
               moe ? ms.apart_params : 0, &ch->backward);
  }
  if (ch->has_embedding) {
    bwd_weights(embed, 0);
    append_ops(stack_ops(embedding_backward_ops(dims)), cm, plan.tensor, kLayerEmbedding,
               &ch->backward);
    grads_done(embed, 0, &ch->backward);
    params += embed;
    tally->st_16bit_params += embed;
  }
  finish_pass(&ch->backward);
  // Model FLOPs leave the recomputed ops out; HFU counts them (each as model FLOPs count
  // it, so that HFU equals MFU without recomputation and exceeds it with).
  const int plain_moe = chunk->moe_layers - local_moe_layers;
  return (ch->num_layers - local_layers - plain_moe) * gemm_flops(low.recompute) +
         plain_moe * gemm_flops(low.moe_recompute) + local_recomputed + mtp_recompute_flops;
}

// Builds chunk `c` of stage `s` into st->chunks[c], adding its parameters to `st` and `tally`
// and its FLOPs to `w`.
void build_chunk(const Scenario& sc, const ModelShares& ms, ModelKernels* kernels, int s, int c,
                 StageWork* st, StageTally* tally, Workload* w) {
  const ModelSpec& model = sc.model;
  const PlanSpec& plan = sc.plan;
  const int p = ms.p, v = ms.v;
  const double t = ms.t, d = ms.d;
  const int vs = c * p + s;
  ChunkWork& ch = st->chunks[c];
  ch.first_layer = ms.first_layer[vs];
  ch.num_layers = ms.layers[vs];
  ch.has_embedding = vs == 0;
  ch.has_output = vs == p * v - 1;
  ch.activation_bytes = 0;
  ChunkParams chunk = tally_layers(model, ms, kernels, &ch, tally);

  const double out = ms.final_norm + (ms.output_copy ? ms.vocab_params : 0);
  const double embed = ms.vocab_params + ms.pos_params;
  build_forward(sc, ms, kernels, vs, out, embed, &ch);
  const double recomputed = build_backward(sc, ms, kernels, vs, out, embed, &ch, st, &chunk, tally);
  ch.backward.model_flops -= recomputed;
  ch.params_per_gpu = chunk.params;
  st->expert_params_per_gpu += chunk.expert_params;
  if (chunk.moe_layers > 0) st->memory.dispatch_buffers = moe_dispatch_buffer_bytes(model, plan);
  // The vocab-parallel cross-entropy saves the fp32 softmax of each micro-batch's logits
  // (M core/tensor_parallel/cross_entropy.py:20-29 makes the fp32 copy, 181 saves
  // exp_logits); the 16-bit logits (a BF16 ColumnParallelLinear's output, also under fp8)
  // live only until the loss of their micro-batch is computed.
  if (ch.has_output) {
    const double logits = ms.tokens * double(model.vocab_size) / t;
    ch.activation_bytes += logits * 4;
    st->memory.logits_transient = logits * 2;
  }

  st->num_layers += ch.num_layers;
  st->params_per_gpu += chunk.params;
  st->compute.add(ch.forward.classes, plan.num_microbatches);
  st->compute.add(ch.backward.classes, plan.num_microbatches);
  const double replicas = t * d * plan.num_microbatches;
  w->model_flops_per_step += replicas * (ch.forward.model_flops + ch.backward.model_flops);
  w->hardware_flops_per_step +=
      replicas * (ch.forward.model_flops + ch.backward.model_flops + recomputed);
}

// Sets what stage `s` moves and holds once its chunks are built (`tally`): its gradient and
// parameter-gather bytes, its optimizer step, its gradient buckets and its memory but for the
// activations (schedule_memory).
void finish_stage(const Scenario& sc, const ComputeModel& compute, const LayerDims& dims,
                  const ModelShares& ms, const StageTally& tally, int s, StageWork* stage) {
  const ModelSpec& model = sc.model;
  const PlanSpec& plan = sc.plan;
  const double t = ms.t, h = ms.h, d = ms.d, edp = ms.edp;
  const bool fp8 = ms.fp8, fp4 = ms.fp4;
  const double gather_bytes = ms.gather_bytes, tokens = ms.tokens;
  const double weight_bytes = ms.weight_bytes, fp8_weight_bytes = ms.fp8_weight_bytes;
  const double fp8_weight_cast = ms.fp8_weight_cast;
  const double low_params = tally.low_params, bf16_params = tally.bf16_params;
  const double min_unit = tally.min_unit, max_unit = tally.max_unit;
  const double max_expert_unit = tally.max_expert_unit, st_16bit_params = tally.st_16bit_params;
  StageWork& st = *stage;
  const double params = st.params_per_gpu;
  // Expert weights: their gradients reduce and their optimizer state shards over the
  // expert-data-parallel group (t cp d / (EP ETP)), the rest over d cp (Megatron-Core's
  // expert DDP).
  const double experts = st.expert_params_per_gpu, dense = params - experts;
  // Each copy of the distributed optimizer (num_distributed_optimizer_instances) steps its
  // d cp / instances GPUs' shards: every GPU steps instances times the parameters.
  const int copies = plan.distributed_optimizer_instances;
  const double opt_share = plan.distributed_optimizer ? plan.optimizer_shards() : 1;
  const double grad_elem = grad_element_bytes(plan);
  const double expert_share =
      plan.distributed_optimizer ? double(plan.expert_data_parallel()) / copies : 1;
  const double sharded = dense / opt_share + experts / expert_share;
  st.grad_bytes = dense * grad_elem;
  st.param_gather_bytes = plan.distributed_optimizer ? dense * gather_bytes : 0;
  st.expert_grad_bytes = experts * grad_elem;
  st.expert_param_gather_bytes = plan.distributed_optimizer ? experts * gather_bytes : 0;
  // The weights' FP8 / NVFP4 copies are cast once a step with the optimizer: the transformer
  // layers' linear weights at the plan's precision (not the embedding and output layer, D6,
  // nor the layers first_last_layers_bf16 keeps in BF16).
  const double cast_bytes =
      low_params * (fp4 ? nvfp4_weight_cast_bytes_per_param() : fp8_weight_cast);
  // Optimizer CPU offload: the host steps its share (optimizer_offload.h); the GPU the rest.
  // Its shard holds about 4 weight matrices a layer of the stage, / d cp.
  st.offload = optimizer_offload(
      plan, sc.cluster, sharded,
      4.0 * st.num_layers / (plan.distributed_optimizer ? plan.optimizer_shards() : 1));
  const double on_gpu = sharded - st.offload.params;
  st.optimizer_s = timed_optimizer(compute, on_gpu * adam_bytes_per_param(plan), fp8 || fp4,
                                   cast_bytes, &st.compute);
  st.p2p_bytes = tokens * h * dims.elem / (plan.sequence_parallel ? t : 1);
  st.grad_bucket_params = plan.grad_bucket_size > 0
                              ? double(plan.grad_bucket_size)
                              : std::max(kBucketParams, kBucketParamsPerReplica * d);
  // Megatron-Core FSDP reduce-scatters each FSDP unit (a transformer layer) as its backward
  // ends. Dense parameters shard over the data-parallel group; expert parameters (reduced
  // apart) over the expert-data-parallel group, in buckets of one layer's experts. The
  // smallest unit as the bucket size launches a bucket at every layer's end.
  st.expert_grad_bucket_params = st.grad_bucket_params;
  if (plan.shards_params()) {
    st.grad_bucket_params = min_unit;
    st.expert_grad_bucket_params = max_expert_unit;
  }
  const double dispatch_buffers = st.memory.dispatch_buffers;
  const double logits_transient = st.memory.logits_transient;
  const double weight_elem = weight_bytes + fp8_weight_bytes;
  const bool fsdp = plan.shards_params();
  // One distributed-optimizer copy shards over d cp / instances GPUs (Megatron-Core's
  // intra_partial_data_parallel group), the experts' over EDP / instances.
  const double shards = plan.optimizer_shards();
  const double expert_shards = edp / copies;
  st.memory = sharded_memory(plan, shards, dense, max_unit, fsdp ? max_unit : st.grad_bucket_params,
                             weight_elem, grad_elem);
  st.memory.dispatch_buffers = dispatch_buffers;
  st.memory.logits_transient = logits_transient;
  // The embedding and output weights stay 16-bit, without FP8 copies.
  if (fp8) {
    const double share = fsdp && shards > 1 ? shards : 1;
    st.memory.weights -= st_16bit_params * (weight_elem - 2) / share;
  }
  st.memory.reserved = reserved_memory(sc.cluster, model, plan, s);
  const StageMemory expert_memory =
      sharded_memory(plan, expert_shards, experts, max_expert_unit,
                     fsdp ? max_expert_unit : st.grad_bucket_params, weight_elem, grad_elem);
  st.memory.weights += expert_memory.weights;
  st.memory.gradients += expert_memory.gradients;
  st.memory.optimizer += expert_memory.optimizer;
  st.memory.step_main_grads += expert_memory.step_main_grads;
  // fp8 and first_last_layers_bf16: no FP8 copies of the BF16 layers (their share under
  // optim_grads_params); fp4: NVFP4 copies of the FP4 layers only, unsharded (TE caches them
  // per module, docs/memory.md D7).
  if (fp8) {
    st.memory.weights -= bf16_params * fp8_weight_bytes / (fsdp && shards > 1 ? shards : 1);
  }
  if (fp4) st.memory.weights += low_params * nvfp4_weight_bytes_per_param();
  // Offload: the host holds the offloaded share of the optimizer state.
  if (st.offload.active) {
    st.memory.optimizer *= 1 - plan.optimizer_offload_fraction;
    st.memory.host_optimizer = st.offload.host_bytes;
  }
  if (plan.context > 1) st.memory.cp_buffers = cp_buffer_bytes(dims);
}

}  // namespace

std::vector<int> virtual_stage_layers(const ModelSpec& model, const PlanSpec& plan) {
  if (!plan.pipeline_layers.empty()) return plan.pipeline_layers;
  const int chunks = plan.pipeline * plan.virtual_stages;
  return std::vector<int>(chunks, model.num_layers / chunks);
}

Workload build_workload(const Scenario& sc) { return build_workload(sc, build_programs(sc.plan)); }

Workload build_workload(const Scenario& sc, const std::vector<StageProgram>& programs) {
  const ModelSpec& model = sc.model;
  const PlanSpec& plan = sc.plan;
  const ComputeModel compute(sc.cluster.gpu, plan.precision);
  ModelKernels kernels(sc, compute);
  const ModelShares ms = model_shares(sc, kernels.low.dims);

  Workload w;
  w.total_params = model_params(model) + mtp_params(model);
  w.stages.resize(ms.p);
  for (int s = 0; s < ms.p; ++s) {
    StageWork& st = w.stages[s];
    st.chunks.resize(ms.v);
    StageTally tally;
    tally.min_unit = ms.per_layer_params;
    for (int c = 0; c < ms.v; ++c) build_chunk(sc, ms, &kernels, s, c, &st, &tally, &w);
    finish_stage(sc, compute, kernels.low.dims, ms, tally, s, &st);
  }
  schedule_memory(programs, &w);
  // The peak is the larger of the backward's (activations and buffers held) and the optimizer
  // step's (fp32 main gradients held, no activations): what the step needs beyond the
  // activations counts with the gradients.
  for (StageWork& st : w.stages) {
    const StageMemory& m = st.memory;
    st.memory.gradients +=
        std::max(0.0, m.step_main_grads - (m.activations + m.cp_buffers + m.dispatch_buffers));
  }
  w.active_params = active_params(model) + mtp_active_params(model);
  w.megatron_flops_per_step = megatron_model_flops(model, plan.global_batch_size) +
                              mtp_megatron_flops(model, plan.global_batch_size);
  w.tokens_per_expert_mean = moe_tokens_per_expert(model, plan);
  w.tokens_per_expert_max = w.tokens_per_expert_mean * moe_busiest_expert_load(plan);
  return w;
}

}  // namespace trident
