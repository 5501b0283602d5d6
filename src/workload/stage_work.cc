#include "workload/stage_work.h"

#include <algorithm>

#include "core/errors.h"
#include "workload/compute_model.h"
#include "workload/layer_ops.h"

namespace trident {
namespace {

// Bytes per parameter of gradients: Megatron accumulates and reduces bf16 gradients in fp32.
double grad_element_bytes(Precision p) { return p == Precision::kFp16 ? 2.0 : 4.0; }
// Adam state per parameter: fp32 master weights, momentum and variance.
constexpr double kOptimizerStateBytes = 12;
// HBM traffic of one fused Adam update per parameter: read master, gradient, momentum and
// variance (4 x 4 B), write master, momentum, variance (3 x 4 B) and the 16-bit weights (2 B).
constexpr double kAdamBytesPerParam = 30;

double op_time(const Op& op, const ComputeModel& cm) {
  switch (op.kind) {
    case OpKind::kGemm:
      return cm.gemm_time(op.gemm);
    case OpKind::kMemory:
      return cm.memory_time(op.bytes);
    case OpKind::kTpAllReduce:
      return 0;
  }
  return 0;
}

// Appends `ops` to `pass`: compute accumulates until a TP all-reduce closes the segment; an
// all-reduce marked overlaps_next takes the following op as its concurrent compute. With t = 1
// the all-reduces vanish.
void append_ops(const std::vector<Op>& ops, const ComputeModel& cm, int tensor, Pass* pass) {
  if (pass->segments.empty()) pass->segments.emplace_back();
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.kind == OpKind::kGemm) pass->flops += op.gemm.flops();
    if (op.kind != OpKind::kTpAllReduce) {
      const double t = op_time(op, cm);
      pass->segments.back().compute_s += t;
      pass->compute_s += t;
      continue;
    }
    if (tensor == 1) continue;
    Segment& seg = pass->segments.back();
    seg.tp_bytes = op.bytes;
    pass->collectives += 1;
    pass->tp_bytes += op.bytes;
    if (op.overlaps_next && i + 1 < ops.size() && ops[i + 1].kind != OpKind::kTpAllReduce) {
      const Op& next = ops[++i];
      if (next.kind == OpKind::kGemm) pass->flops += next.gemm.flops();
      seg.overlap_s = op_time(next, cm);
      pass->compute_s += seg.overlap_s;
    }
    pass->segments.emplace_back();
  }
}

// Drops a trailing empty segment left by a pass that ends with a collective.
void finish(Pass* pass) {
  while (pass->segments.size() > 1 && pass->segments.back().compute_s == 0 &&
         pass->segments.back().tp_bytes == 0) {
    pass->segments.pop_back();
  }
}

// The attention core that selective recomputation re-runs before the backward pass.
std::vector<Op> attention_core(const std::vector<Op>& forward) {
  std::vector<Op> core;
  for (const Op& op : forward) {
    if (op.name == "attn_scores" || op.name == "softmax" || op.name == "attn_dropout" ||
        op.name == "attn_values") {
      core.push_back(op);
    }
  }
  return core;
}

void refuse(const Scenario& sc, const char* key, const char* what) {
  throw PlanError(SourceLocation{sc.path, 0, 0, key}, what);
}

// Activation bytes one layer keeps for its backward pass (Korthikanti et al. 2022, 16-bit).
double layer_activation_bytes(const ModelSpec& m, const PlanSpec& p) {
  const double sbh = double(p.micro_batch_size) * m.seq_length * m.hidden_size;
  const double t = p.tensor, a = m.num_attention_heads, s = m.seq_length, h = m.hidden_size;
  switch (p.recompute) {
    case Recompute::kFull:
      return 2 * sbh;
    case Recompute::kSelective:
      return sbh * (10 + 24 / t);
    case Recompute::kNone:
      break;
  }
  return sbh * (10 + 24 / t + 5 * a * s / (h * t));
}

int in_flight(const PlanSpec& p, int stage) {
  if (p.schedule == ScheduleKind::kGpipe) return p.num_microbatches;
  return std::min(p.num_microbatches, p.pipeline - stage);
}

}  // namespace

double layer_params(const ModelSpec& m) {
  const double h = m.hidden_size, f = double(m.ffn_hidden_size);
  const double kv = 2 * h * m.num_query_groups / m.num_attention_heads;
  // GPT-style models carry biases and LayerNorm (weight + bias); gated (Llama-style) models
  // carry neither bias nor norm bias.
  if (m.swiglu) return h * (h + kv) + h * h + 3 * h * f + 2 * h;
  return h * (h + kv) + (h + kv) + h * h + h + 2 * h * f + f + h + 4 * h;
}

double model_params(const ModelSpec& m) {
  const double h = m.hidden_size;
  const double embed =
      double(m.vocab_size) * h + (m.learned_position_embeddings ? m.seq_length * h : 0);
  const double final_norm = m.swiglu ? h : 2 * h;
  return m.num_layers * layer_params(m) + embed + final_norm;
}

Workload build_workload(const Scenario& sc) {
  const ModelSpec& model = sc.model;
  const PlanSpec& plan = sc.plan;
  if (plan.schedule == ScheduleKind::kInterleaved1F1B)
    refuse(sc, "plan.schedule", "interleaved-1f1b is not simulated yet (use gpipe or 1f1b)");
  if (plan.sequence_parallel)
    refuse(sc, "plan.sequence_parallel", "sequence parallelism is not simulated yet");
  if (plan.distributed_optimizer)
    refuse(sc, "plan.distributed_optimizer", "the distributed optimizer is not simulated yet");
  if (plan.overlap_grad_reduce)
    refuse(sc, "plan.overlap_grad_reduce", "overlapped gradient reduction is not simulated yet");

  const ComputeModel cm(sc.cluster.gpu, plan.precision);
  const LayerDims dims = make_layer_dims(model, plan);
  const std::vector<Op> layer_fwd = layer_forward_ops(dims);
  const std::vector<Op> layer_bwd = layer_backward_ops(dims);
  const double t = plan.tensor, h = model.hidden_size;
  const int p = plan.pipeline;
  const int layers_per_stage = model.num_layers / p;
  const double per_layer_params = layer_params(model) / t;
  const double vocab_params = double(model.vocab_size) * h / t;
  const double pos_params = model.learned_position_embeddings ? double(model.seq_length) * h : 0;
  const double act_layer = layer_activation_bytes(model, plan);

  Workload w;
  w.total_params = model_params(model);
  w.stages.resize(p);
  for (int i = 0; i < p; ++i) {
    StageWork& st = w.stages[i];
    st.first_layer = i * layers_per_stage;
    st.num_layers = layers_per_stage;
    const bool first = i == 0, last = i == p - 1;

    if (first) append_ops(embedding_forward_ops(dims), cm, plan.tensor, &st.forward);
    for (int l = 0; l < layers_per_stage; ++l) append_ops(layer_fwd, cm, plan.tensor, &st.forward);
    if (last) append_ops(output_forward_ops(dims), cm, plan.tensor, &st.forward);
    finish(&st.forward);
    st.forward.model_flops = st.forward.flops;

    if (last) append_ops(output_backward_ops(dims), cm, plan.tensor, &st.backward);
    for (int l = 0; l < layers_per_stage; ++l) {
      if (plan.recompute == Recompute::kFull) {
        append_ops(layer_fwd, cm, plan.tensor, &st.backward);
      } else if (plan.recompute == Recompute::kSelective) {
        append_ops(attention_core(layer_fwd), cm, plan.tensor, &st.backward);
      }
      append_ops(layer_bwd, cm, plan.tensor, &st.backward);
    }
    if (first) append_ops(embedding_backward_ops(dims), cm, plan.tensor, &st.backward);
    finish(&st.backward);
    const double recompute_flops = plan.recompute == Recompute::kFull
                                       ? layers_per_stage * gemm_flops(layer_fwd)
                                   : plan.recompute == Recompute::kSelective
                                       ? layers_per_stage * gemm_flops(attention_core(layer_fwd))
                                       : 0.0;
    st.backward.model_flops = st.backward.flops - recompute_flops;

    double params = layers_per_stage * per_layer_params;
    if (first) params += vocab_params + pos_params;
    if (last) params += (model.swiglu ? h : 2 * h) + (p > 1 ? vocab_params : 0);
    st.params_per_gpu = params;
    st.grad_bytes = params * grad_element_bytes(plan.precision);
    st.optimizer_s = cm.memory_time(params * kAdamBytesPerParam);
    st.p2p_bytes = double(plan.micro_batch_size) * model.seq_length * h * dims.elem;

    st.memory.weights = params * precision_bytes(plan.precision);
    st.memory.gradients = st.grad_bytes;
    st.memory.optimizer = params * kOptimizerStateBytes;
    double act = act_layer * layers_per_stage;
    const double tokens = double(plan.micro_batch_size) * model.seq_length;
    // Logits (16-bit) and the fp32 softmax of the vocab-parallel cross-entropy.
    if (last) act += tokens * double(model.vocab_size) / t * (dims.elem + 4);
    st.memory.activations_per_microbatch = act;
    st.memory.microbatches_in_flight = in_flight(plan, i);

    const double replicas = t * plan.data * plan.num_microbatches;
    w.model_flops_per_step += replicas * (st.forward.model_flops + st.backward.model_flops);
    w.hardware_flops_per_step += replicas * (st.forward.flops + st.backward.flops);
  }
  return w;
}

}  // namespace trident
