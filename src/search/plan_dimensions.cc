// The entries of the plan-space table (plan_space.h): each searched field's candidates, how a
// value is applied and the Megatron-LM rule that admits it.
#include "search/plan_dimensions.h"

#include <algorithm>
#include <numeric>

#include "config/checks.h"
#include "config/pipeline_split.h"
#include "lowering/shortcuts.h"

namespace trident {
namespace {

using Values = std::vector<std::string>;

std::string str(int v) { return std::to_string(v); }

// Divisors of n in increasing order.
std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int k = 1; k <= n; ++k) {
    if (n % k == 0) out.push_back(k);
  }
  return out;
}

bool parse_int(const std::string& text, int* out) {
  try {
    size_t used = 0;
    const long v = std::stol(text, &used);
    if (used != text.size() || v < 1 || v > 1000000000) return false;
    *out = static_cast<int>(v);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

bool parse_bool(const std::string& text, bool* out) {
  if (text == "true") return *out = true, true;
  if (text == "false") return *out = false, true;
  return false;
}

const Values kBools = {"false", "true"};

bool parse_placement(std::string text, std::vector<ParallelDim>* out) {
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') return false;
  std::vector<ParallelDim> p;
  const std::string body = text.substr(1, text.size() - 2);
  for (size_t start = 0; start <= body.size();) {
    size_t comma = body.find(',', start);
    if (comma == std::string::npos) comma = body.size();
    const std::string name = body.substr(start, comma - start);
    start = comma + 1;
    ParallelDim dim;
    if (!parse_parallel_dim(name, &dim)) return false;
    if (std::find(p.begin(), p.end(), dim) != p.end()) return false;
    p.push_back(dim);
  }
  if (p.size() < 3) return false;
  *out = full_placement(p);
  return true;
}

// Sets the layer split: even when p * v divides the layers, else Megatron-style balanced
// (config/pipeline_split.h), which plan_issues accepts as plan.pipeline_layers.
void set_layer_split(const SearchContext& c, PlanSpec* p) {
  const int layers = c.model->num_layers;
  const int stages = p->pipeline * p->virtual_stages;
  p->pipeline_layers.clear();
  p->mtp_virtual_stage = -1;  // a searched split puts multi-token prediction last, with the loss
  if (stages <= layers && layers % stages != 0) {
    p->pipeline_layers = balanced_split(layers, p->pipeline, p->virtual_stages);
  }
}

}  // namespace

std::vector<SearchDimension> build_dimensions() {
  std::vector<SearchDimension> d;
  // Tensor parallel: divides heads and query groups (Megatron-Core's attention splits both
  // over t) and the GPUs; the table stops at two NVLink islands (TP collectives cross the
  // network on every layer past that; --vary reaches further).
  d.push_back({"plan.tensor_parallel",
               [](const SearchContext& c, const PlanSpec&) {
                 Values out;
                 const int heads =
                     std::gcd(c.model->num_attention_heads, c.model->num_query_groups);
                 for (int t : divisors(c.gpus)) {
                   if (heads % t == 0 && t <= 2 * c.cluster->nvlink.island_size)
                     out.push_back(str(t));
                 }
                 return out;
               },
               [](const std::string& v, const SearchContext&, PlanSpec* p) {
                 return parse_int(v, &p->tensor);
               },
               [](const SearchContext& c, const PlanSpec& p) -> std::string {
                 if (c.gpus % p.tensor != 0) return "t divides the GPUs";
                 if (c.model->num_attention_heads % p.tensor != 0)
                   return "attention heads divisible by t";
                 if (c.model->num_query_groups % p.tensor != 0)
                   return "query groups divisible by t";
                 return "";
               }});
  // Context parallel (Megatron-Core's ring attention, p2p): powers of two whose ranks keep at
  // least 4096 tokens each and split the sequence into 2 cp chunks (with experts too: their
  // groups fold over t x cp x d, Megatron-Core's tp-cp-ep-dp order). Searched from cp = 1 up.
  d.push_back({"plan.context_parallel",
               [](const SearchContext& c, const PlanSpec& p) {
                 Values out = {"1"};
                 const int seq = c.model->seq_length;
                 for (int cp = 2; seq / cp >= 4096; cp *= 2) {
                   if (seq % (2 * cp) == 0 && (c.gpus / p.tensor) % cp == 0) out.push_back(str(cp));
                 }
                 return out;
               },
               [](const std::string& v, const SearchContext&, PlanSpec* p) {
                 return parse_int(v, &p->context);
               },
               [](const SearchContext& c, const PlanSpec& p) -> std::string {
                 if (c.gpus % (p.tensor * p.context) != 0) return "t * cp divides the GPUs";
                 if (c.model->seq_length % (2 * p.context) != 0) {
                   return "sequence divisible by 2 cp";
                 }
                 return "";
               }});
  // Pipeline parallel: t * cp * p divides the GPUs (data parallel is the rest), at most one
  // stage per layer; layers that do not divide get an uneven split (plan.pipeline_layers).
  d.push_back({"plan.pipeline_parallel",
               [](const SearchContext& c, const PlanSpec& p) {
                 Values out;
                 for (int k : divisors(c.gpus / (p.tensor * p.context))) {
                   if (k <= c.model->num_layers) out.push_back(str(k));
                 }
                 return out;
               },
               [](const std::string& v, const SearchContext& c, PlanSpec* p) {
                 if (!parse_int(v, &p->pipeline)) return false;
                 p->data = std::max(1, c.gpus / (p->tensor * p->context * p->pipeline));
                 return true;
               },
               [](const SearchContext& c, const PlanSpec& p) -> std::string {
                 if (c.gpus % (p.tensor * p.context * p.pipeline) != 0) {
                   return "t * cp * p divides the GPUs";
                 }
                 if (p.pipeline > c.model->num_layers) return "at most one stage per layer";
                 return "";
               }});
  // Expert parallel (mixture-of-experts models): EP divides the experts and folds into the
  // context- and data-parallel ranks (Megatron-Core's expert groups), so it divides cp x d.
  d.push_back({"plan.expert_model_parallel_size",
               [](const SearchContext& c, const PlanSpec& p) {
                 if (!c.model->moe()) return Values{"1"};
                 Values out;
                 for (int ep : divisors(p.context * p.data)) {
                   if (c.model->num_experts % ep == 0) out.push_back(str(ep));
                 }
                 return out;
               },
               [](const std::string& v, const SearchContext&, PlanSpec* p) {
                 if (!parse_int(v, &p->expert_parallel)) return false;
                 p->expert_tensor_parallel = p->tensor;
                 return true;
               },
               [](const SearchContext& c, const PlanSpec& p) -> std::string {
                 if (p.expert_parallel == 1) return "";
                 if (!c.model->moe()) return "expert parallelism needs experts";
                 if (c.model->num_experts % p.expert_parallel != 0) return "EP divides the experts";
                 if (p.context * p.data % p.expert_parallel != 0) return "EP divides cp x d";
                 return "";
               }});
  // The token dispatcher with EP > 1, under --wide: Megatron-Core's alltoall or flex (DeepEP;
  // no shared-expert overlap nor padding to capacity, as checks.cc states).
  d.push_back({"plan.moe_token_dispatcher_type",
               [](const SearchContext& c, const PlanSpec& p) {
                 const MoeDispatcher base = c.base.moe_dispatcher;
                 if (!c.model->moe() || p.expert_parallel == 1 || !c.wide ||
                     base == MoeDispatcher::kAllGather) {
                   return Values{base == MoeDispatcher::kFlex       ? "flex"
                                 : base == MoeDispatcher::kAllToAll ? "alltoall"
                                                                    : "allgather"};
                 }
                 return Values{"alltoall", "flex"};
               },
               [](const std::string& v, const SearchContext&, PlanSpec* p) {
                 if (v != "alltoall" && v != "flex" && v != "allgather") return false;
                 p->moe_dispatcher = v == "flex"       ? MoeDispatcher::kFlex
                                     : v == "alltoall" ? MoeDispatcher::kAllToAll
                                                       : MoeDispatcher::kAllGather;
                 return true;
               },
               [](const SearchContext&, const PlanSpec& p) -> std::string {
                 if (p.moe_dispatcher == MoeDispatcher::kFlex &&
                     (p.moe_shared_expert_overlap || p.moe_pad_to_capacity)) {
                   return "flex has no shared-expert overlap nor padding to capacity";
                 }
                 return "";
               }});
  // Expert tensor parallel with the alltoall or flex dispatcher: experts split like the dense
  // layers (ETP = t) or whole (ETP = 1: Megatron-Core folds the TP ranks into the expert
  // groups).
  d.push_back({"plan.expert_tensor_parallel_size",
               [](const SearchContext& c, const PlanSpec& p) {
                 if (!c.model->moe() || p.tensor == 1 ||
                     p.moe_dispatcher == MoeDispatcher::kAllGather) {
                   return Values{str(p.tensor)};
                 }
                 return Values{str(p.tensor), "1"};
               },
               [](const std::string& v, const SearchContext&, PlanSpec* p) {
                 return parse_int(v, &p->expert_tensor_parallel);
               },
               [](const SearchContext&, const PlanSpec& p) -> std::string {
                 const int block = p.expert_parallel * p.expert_tensor();
                 if (block % p.tensor != 0 && p.tensor % block != 0) {
                   return "EP x ETP tiles the TP groups";
                 }
                 return "";
               }});
  // Micro-batch size: global batch = num_microbatches * mbs * d (Megatron's
  // get_num_microbatches); the table tries mbs up to 16.
  d.push_back({"plan.micro_batch_size",
               [](const SearchContext& c, const PlanSpec& p) {
                 Values out;
                 const int per_replica = c.base.global_batch_size / p.data;
                 for (int k : divisors(std::max(1, per_replica))) {
                   if (k <= 16) out.push_back(str(k));
                 }
                 return out;
               },
               [](const std::string& v, const SearchContext& c, PlanSpec* p) {
                 if (!parse_int(v, &p->micro_batch_size)) return false;
                 p->num_microbatches = c.base.global_batch_size / (p->micro_batch_size * p->data);
                 return true;
               },
               [](const SearchContext& c, const PlanSpec& p) -> std::string {
                 if (c.base.global_batch_size % (p.micro_batch_size * p.data) != 0) {
                   return "global batch divisible by mbs * d";
                 }
                 return "";
               }});
  // Schedule: 1F1B, or Megatron's interleaved 1F1B, which needs p >= 2 and the micro-batches
  // a multiple of p (megatron/core/pipeline_parallel/schedules.py).
  d.push_back({"plan.schedule",
               [](const SearchContext&, const PlanSpec& p) {
                 return p.pipeline > 1 ? Values{"1f1b", "interleaved-1f1b"} : Values{"1f1b"};
               },
               [](const std::string& v, const SearchContext&, PlanSpec* p) {
                 return parse_schedule(v, &p->schedule);
               },
               [](const SearchContext&, const PlanSpec& p) -> std::string {
                 if (p.schedule != ScheduleKind::kInterleaved1F1B) return "";
                 if (p.pipeline < 2) return "interleaved needs p >= 2";
                 if (p.num_microbatches % p.pipeline != 0) {
                   return "interleaved: micro-batches a multiple of p";
                 }
                 return "";
               }});
  // Virtual stages (model chunks per GPU): 1 unless interleaved; interleaved, every v >= 2
  // whose p * v divides the layers, or v = 2..4 with an uneven split when none does.
  d.push_back({"plan.virtual_stages",
               [](const SearchContext& c, const PlanSpec& p) {
                 if (p.schedule != ScheduleKind::kInterleaved1F1B) return Values{"1"};
                 Values out;
                 const int layers = c.model->num_layers;
                 for (int v = 2; p.pipeline * v <= layers; ++v) {
                   if (layers % (p.pipeline * v) == 0) out.push_back(str(v));
                 }
                 if (out.empty()) {
                   for (int v = 2; v <= 4 && p.pipeline * v <= layers; ++v) out.push_back(str(v));
                 }
                 return out;
               },
               [](const std::string& v, const SearchContext& c, PlanSpec* p) {
                 if (!parse_int(v, &p->virtual_stages)) return false;
                 set_layer_split(c, p);
                 return true;
               },
               [](const SearchContext& c, const PlanSpec& p) -> std::string {
                 const bool interleaved = p.schedule == ScheduleKind::kInterleaved1F1B;
                 if (interleaved != (p.virtual_stages > 1)) return "v > 1 exactly when interleaved";
                 if (p.pipeline * p.virtual_stages > c.model->num_layers) {
                   return "at most one virtual stage per layer";
                 }
                 return "";
               }});
  // Sequence parallelism splits LayerNorm/dropout activations over t: a no-op at t = 1
  // (Megatron turns it off there), so only searched for t > 1.
  d.push_back({"plan.sequence_parallel",
               [](const SearchContext&, const PlanSpec& p) {
                 return p.tensor > 1 ? kBools : Values{"false"};
               },
               [](const std::string& v, const SearchContext&, PlanSpec* p) {
                 return parse_bool(v, &p->sequence_parallel);
               },
               [](const SearchContext& c, const PlanSpec& p) -> std::string {
                 if (p.sequence_parallel && p.tensor == 1) return "sequence parallel needs t > 1";
                 if (p.sequence_parallel && c.model->seq_length % (2 * p.context * p.tensor) != 0) {
                   return "with context parallel, sequence divisible by 2 cp t";
                 }
                 return "";
               }});
  // TP communication overlapped with the GEMMs (Transformer Engine userbuffers): needs
  // sequence parallelism and t > 1 (checks.cc, as Megatron asserts).
  d.push_back({"plan.tp_comm_overlap",
               [](const SearchContext& c, const PlanSpec& p) {
                 if (p.tensor < 2 || !p.sequence_parallel) return Values{"false"};
                 if (c.wide) return kBools;
                 return Values{c.base.tp_comm_overlap ? "true" : "false"};
               },
               [](const std::string& v, const SearchContext&, PlanSpec* p) {
                 return parse_bool(v, &p->tp_comm_overlap);
               },
               [](const SearchContext&, const PlanSpec& p) -> std::string {
                 if (p.tp_comm_overlap && (p.tensor == 1 || !p.sequence_parallel)) {
                   return "tp_comm_overlap needs sequence parallel and t > 1";
                 }
                 return "";
               }});
  d.push_back({"plan.recompute",
               [](const SearchContext&, const PlanSpec&) {
                 return Values{"none", "selective", "full"};
               },
               [](const std::string& v, const SearchContext&, PlanSpec* p) {
                 return parse_recompute(v, &p->recompute);
               },
               [](const SearchContext&, const PlanSpec&) { return std::string(); }});
  // What data parallelism shards (Megatron-Core's data_parallel_sharding_strategy; the
  // distributed optimizer is every strategy but no_shard): only over a data-parallel group
  // (d * cp > 1, the dp-cp group that shards). Routed experts shard over their
  // expert-data-parallel group (Megatron-FSDP's expert parameter groups).
  d.push_back(
      {"plan.data_parallel_sharding_strategy",
       [](const SearchContext& c, const PlanSpec& p) {
         if (p.data_context() < 2) return Values{"no_shard"};
         if (!c.wide) return Values{"no_shard", "optim"};
         return Values{"no_shard", "optim", "optim_grads", "optim_grads_params"};
       },
       [](const std::string& v, const SearchContext&, PlanSpec* p) {
         if (!parse_dp_sharding(v, &p->dp_sharding)) return false;
         p->distributed_optimizer = p->dp_sharding != DpSharding::kNoShard;
         return true;
       },
       [](const SearchContext& c, const PlanSpec& p) -> std::string {
         if (p.dp_sharding == DpSharding::kNoShard) return "";
         if (p.data_context() < 2) return "sharding needs d * cp > 1";
         // Every micro-batch reduce-scatters (and gathers): the one rule of the table
         // that is trident's, not Megatron's (the simulation-activity limit). Placement
         // and overlap_param_gather come later and decide the shortcuts: pruned here
         // only when the fewest activities any of them allows are over the limit
         // (the enumeration's last check counts the plan's own shortcuts).
         if (p.shards_gradients() &&
             !activity_limit_issues(p, *c.model, *c.cluster, fewest_activities_scope(p, *c.model))
                  .empty()) {
           return "sharded gradients: simulation above trident's size limit";
         }
         return "";
       }});
  // Overlapped gradient reduction acts on the data-parallel group: the same plan at d = 1.
  // Megatron turns it on for optim_grads and optim_grads_params (megatron/training/
  // arguments.py), so those take only true.
  d.push_back({"plan.overlap_grad_reduce",
               [](const SearchContext&, const PlanSpec& p) {
                 if (p.shards_gradients()) return Values{"true"};
                 return p.data > 1 ? kBools : Values{"false"};
               },
               [](const std::string& v, const SearchContext&, PlanSpec* p) {
                 return parse_bool(v, &p->overlap_grad_reduce);
               },
               [](const SearchContext&, const PlanSpec& p) -> std::string {
                 if (p.overlap_grad_reduce && p.data == 1 && !p.shards_gradients()) {
                   return "overlap_grad_reduce needs d > 1";
                 }
                 if (!p.overlap_grad_reduce && p.shards_gradients()) {
                   return "optim_grads(_params) overlap the gradient reduction";
                 }
                 return "";
               }});
  // The parameter all-gather behind the next step's forward: Megatron asserts the distributed
  // optimizer and overlap_grad_reduce for it, and sets it for optim_grads_params (whose
  // weights are gathered per layer anyway: the one value true).
  d.push_back({"plan.overlap_param_gather",
               [](const SearchContext& c, const PlanSpec& p) {
                 if (p.shards_params()) return Values{"true"};
                 if (!p.distributed_optimizer || !p.overlap_grad_reduce) return Values{"false"};
                 if (c.wide) return kBools;
                 return Values{c.base.overlap_param_gather ? "true" : "false"};
               },
               [](const std::string& v, const SearchContext&, PlanSpec* p) {
                 return parse_bool(v, &p->overlap_param_gather);
               },
               [](const SearchContext&, const PlanSpec& p) -> std::string {
                 if (!p.overlap_param_gather) {
                   return p.shards_params() ? "optim_grads_params overlaps the parameter gather"
                                            : "";
                 }
                 if (!p.distributed_optimizer) return "overlap_param_gather needs dopt";
                 if (!p.overlap_grad_reduce)
                   return "overlap_param_gather needs overlap_grad_reduce";
                 return "";
               }});
  // Gradients reduced in bf16 change the numerics, not only the speed: searched only when
  // --vary names it; otherwise the base's value.
  d.push_back({"plan.grad_reduce_in_bf16",
               [](const SearchContext& c, const PlanSpec&) {
                 return Values{c.base.grad_reduce_in_bf16 ? "true" : "false"};
               },
               [](const std::string& v, const SearchContext&, PlanSpec* p) {
                 return parse_bool(v, &p->grad_reduce_in_bf16);
               },
               [](const SearchContext&, const PlanSpec&) { return std::string(); }});
  // Placement: TP groups inside a node, then data or pipeline ranks next (Megatron's default
  // order tp-cp-ep-dp-pp is the first). Equivalent when d = 1 or p = 1.
  d.push_back({"plan.placement",
               [](const SearchContext&, const PlanSpec& p) {
                 Values out = {"[tensor, context, data, pipeline]"};
                 if (p.data > 1 && p.pipeline > 1)
                   out.push_back("[tensor, context, pipeline, data]");
                 return out;
               },
               [](const std::string& v, const SearchContext&, PlanSpec* p) {
                 return parse_placement(v, &p->placement);
               },
               [](const SearchContext&, const PlanSpec&) { return std::string(); }});
  return d;
}

bool parse_search_bool(const std::string& text, bool* out) { return parse_bool(text, out); }

}  // namespace trident
