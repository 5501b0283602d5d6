// Conversion of the `plan:` section (docs/schema.md, `plan`) field by field; its resolution on a
// cluster and model is in plan_resolve.cc.
#include <algorithm>
#include <cstdio>
#include <set>
#include <utility>

#include "config/pipeline_layout.h"
#include "config/section_readers.h"
#include "config/stack.h"

namespace trident {
namespace {

// Reads a placement of tensor, context, data and pipeline (context may be left out: it then
// goes right after tensor, see full_placement).
std::vector<ParallelDim> read_placement(const MapReader& map) {
  const std::string expected =
      "a list of tensor, context, data and pipeline, each once, fastest first (context may be "
      "left out)";
  const YamlNode* list = map.get("placement");
  if (!list->is_sequence())
    map.fail("placement", "expected " + expected + ", got " + list->describe());
  const size_t n = list->items.size();
  std::vector<ParallelDim> out;
  std::set<ParallelDim> seen;
  for (size_t i = 0; i < n && i < 4; ++i) {
    const YamlNode& item = *list->items[i];
    ParallelDim d{};
    if (!item.is_scalar() || !parse_parallel_dim(item.scalar, &d)) {
      throw ConfigError(location_of(item.mark, map.key_path("placement")),
                        "unknown entry " +
                            (item.is_scalar() ? "`" + item.scalar + "`" : item.describe()) +
                            " (expected " + expected + ")");
    }
    if (!seen.insert(d).second) {
      throw ConfigError(
          location_of(item.mark, map.key_path("placement")),
          std::string("`") + item.scalar + "` appears twice (expected " + expected + ")");
    }
    out.push_back(d);
  }
  const bool has_context = seen.count(ParallelDim::kContext) > 0;
  if (n != (has_context ? 4u : 3u)) {
    map.fail("placement", "has " + std::to_string(n) + " entries (expected " + expected + ")");
  }
  return full_placement(out);
}

std::vector<int> read_layer_list(const MapReader& map) {
  const std::string expected =
      "a list of layers per virtual stage, e.g. [5, 6, 6, 5], one entry for each of "
      "pipeline_parallel × virtual_stages";
  const YamlNode* list = map.get("pipeline_layers");
  if (!list->is_sequence()) {
    map.fail("pipeline_layers", "expected " + expected + ", got " + list->describe());
  }
  if (list->items.empty()) map.fail("pipeline_layers", "is empty (expected " + expected + ")");
  std::vector<int> out;
  out.reserve(list->items.size());
  for (const YamlNodePtr& item : list->items) {
    std::int64_t n = 0;
    const bool whole = item->is_scalar() && !item->quoted && parse_int64(item->scalar, &n);
    if (!whole || n < 0 || n > limits::kMaxLayers) {
      throw ConfigError(location_of(item->mark, map.key_path("pipeline_layers")),
                        item->describe() +
                            " is not a layer count (expected an integer from "
                            "0 to " +
                            std::to_string(limits::kMaxLayers) + " per entry)");
    }
    out.push_back(static_cast<int>(n));
  }
  return out;
}

// Reads a list of Megatron module names (recompute_modules, activation_offload) into bits:
// `bit_of` gives a modelled name's bit, `known` lists every name Megatron-Core takes; a known
// name without a bit is refused as not modelled, any other as unknown.
unsigned read_module_list(const MapReader& map, const char* key,
                          unsigned (*bit_of)(const std::string&),
                          const std::vector<std::string>& known) {
  std::string choices;  // the names trident models
  for (const std::string& k : known) {
    if (bit_of(k) != 0) choices += (choices.empty() ? "" : ", ") + k;
  }
  const YamlNode* list = map.get(key);
  if (!list->is_sequence()) {
    map.fail(key, "expected a list of module names (" + choices + "), got " + list->describe());
  }
  unsigned bits = 0;
  for (const YamlNodePtr& item : list->items) {
    const std::string name = item->is_scalar() ? item->scalar : "";
    const unsigned bit = bit_of(name);
    if (bit == 0) {
      const bool megatron = std::find(known.begin(), known.end(), name) != known.end();
      throw ConfigError(location_of(item->mark, map.key_path(key)),
                        (item->is_scalar() ? "`" + name + "`" : item->describe()) +
                            (megatron ? " is a Megatron-Core module trident does not model"
                                      : " is not a module name") +
                            " (expected " + choices + ")");
    }
    bits |= bit;
  }
  return bits;
}

std::string short_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

SourceLocation locate_issue(const MapReader& map, const SpecIssue& issue) {
  const std::string prefix = map.path().empty() ? "" : map.path() + ".";
  for (const std::string& key : issue.keys) {
    if (key.compare(0, prefix.size(), prefix) != 0) continue;
    const YamlEntry* entry = nullptr;
    if (find_path(map.node(), key.substr(prefix.size()), &entry) != nullptr) {
      const YamlMark& m = entry->value->is_null() ? entry->key_mark : entry->value->mark;
      return location_of(m, key);
    }
  }
  return location_of(map.where(), issue.keys.empty() ? map.path() : issue.keys.front());
}

void report_issues(const MapReader& map, const std::vector<SpecIssue>& issues, bool plan) {
  for (const SpecIssue& issue : issues) {
    report(map.diagnostics(), ConfigError(locate_issue(map, issue), issue.message), plan);
  }
}

PlanSpec read_plan_fields(const MapReader& map, PlanGiven* given) {
  map.check_keys();
  PlanSpec p;
  map.field([&] { p.tensor = static_cast<int>(*map.integer("tensor_parallel")); });
  map.field([&] { p.pipeline = static_cast<int>(*map.integer("pipeline_parallel")); });
  map.field([&] { p.context = static_cast<int>(*map.integer("context_parallel")); });
  map.field([&] { parse_cp_comm_type(*map.text("cp_comm_type"), &p.cp_comm_type); });
  given->data = map.has("data_parallel");
  map.field([&] { p.data = static_cast<int>(map.integer("data_parallel").value_or(0)); });
  map.field([&] { p.micro_batch_size = static_cast<int>(*map.integer("micro_batch_size")); });

  given->global_batch_size = map.has("global_batch_size");
  given->num_microbatches = map.has("num_microbatches");
  map.field([&] {
    if (given->global_batch_size && given->num_microbatches) {
      map.fail("num_microbatches",
               "give either global_batch_size or num_microbatches, not both (expected exactly "
               "one; global_batch_size = num_microbatches × micro_batch_size × data_parallel)");
    }
    if (!given->global_batch_size && !given->num_microbatches) {
      // A key written without a value (`num_microbatches: ~`, also from --set) is blamed where
      // it was written.
      const bool empty_mb = map.node().find("num_microbatches") != nullptr;
      const bool empty_gb = map.node().find("global_batch_size") != nullptr;
      map.fail(empty_mb ? "num_microbatches" : "global_batch_size",
               std::string(empty_mb || empty_gb ? "no value given" : "missing required key") +
                   " (expected global_batch_size or num_microbatches)");
    }
  });
  map.field([&] {
    p.global_batch_size = static_cast<int>(map.integer("global_batch_size").value_or(0));
  });
  map.field(
      [&] { p.num_microbatches = static_cast<int>(map.integer("num_microbatches").value_or(0)); });

  map.field([&] { p.virtual_stages = static_cast<int>(*map.integer("virtual_stages")); });
  map.field([&] {
    if (auto n = map.integer("num_layers_per_virtual_pipeline_stage")) {
      if (map.has("virtual_stages")) {
        map.fail("num_layers_per_virtual_pipeline_stage",
                 "give either virtual_stages or num_layers_per_virtual_pipeline_stage, not both "
                 "(expected one way to set the model chunks per GPU)");
      }
      given->layers_per_virtual_stage = static_cast<int>(*n);
    }
  });
  map.field([&] {
    const std::optional<std::string> text = map.text("pipeline_model_parallel_layout");
    if (!text) return;
    std::string why;
    const std::optional<PipelineLayout> layout = parse_pipeline_layout(*text, p.pipeline, &why);
    if (!layout) map.fail("pipeline_model_parallel_layout", "\"" + *text + "\" " + why);
    for (const char* other : {"virtual_stages", "num_layers_per_virtual_pipeline_stage"}) {
      if (map.has(other) &&
          (std::string(other) != "virtual_stages" || p.virtual_stages != layout->virtual_stages)) {
        map.fail(other, "pipeline_model_parallel_layout \"" + *text + "\" has " +
                            std::to_string(layout->virtual_stages) +
                            " virtual stages per pipeline rank (expected " + other +
                            " left out or equal)");
      }
    }
    p.virtual_stages = layout->virtual_stages;
    given->layout_layers = layout->decoder_layers;
    given->layout_mtp_stage = layout->mtp_stage;
    given->layout_mtp_layers = layout->mtp_layers;
  });
  map.field([&] {
    given->embedding_in_split = *map.flag("account_for_embedding_in_pipeline_split");
    given->loss_in_split = *map.flag("account_for_loss_in_pipeline_split");
  });
  map.field([&] {
    // One way to split the layers (Megatron-LM's arguments.py refuses the mixes too).
    const bool accounted = given->embedding_in_split || given->loss_in_split;
    const char* ways[] = {"pipeline_model_parallel_layout", "pipeline_layers",
                          "decoder_first_pipeline_num_layers", "decoder_last_pipeline_num_layers"};
    const char* first = nullptr;
    for (const char* w : ways) {
      if (!map.has(w)) continue;
      const bool first_last_pair = first != nullptr &&
                                   std::string(first) == "decoder_first_pipeline_num_layers" &&
                                   std::string(w) == "decoder_last_pipeline_num_layers";
      if (first != nullptr && !first_last_pair) {
        map.fail(w, std::string("give one of pipeline_model_parallel_layout, pipeline_layers "
                                "and decoder_first/last_pipeline_num_layers, not ") +
                        first + " and " + w);
      }
      if (first == nullptr) first = w;
    }
    if (accounted && first != nullptr) {
      map.fail(given->embedding_in_split ? "account_for_embedding_in_pipeline_split"
                                         : "account_for_loss_in_pipeline_split",
               std::string("applies to the even split only, not with ") + first);
    }
  });
  map.field([&] {
    // Chunks per GPU only make sense interleaved: that is the schedule they imply.
    const bool chunked = p.virtual_stages > 1 || given->layers_per_virtual_stage.has_value();
    parse_schedule(map.text("schedule").value_or(chunked ? "interleaved-1f1b" : "1f1b"),
                   &p.schedule);
  });
  map.field([&] {
    if (auto stack = map.opt_map("stack")) p.stack = read_stack(*stack);
  });
  map.field([&] {
    // Absent, the stack's own context-parallel attention runs (torchtitan calls PyTorch's).
    p.cp_implementation = p.stack.context_parallel;
    if (auto name = map.text("cp_implementation"))
      parse_cp_implementation(*name, &p.cp_implementation);
  });
  map.field([&] { p.sequence_parallel = *map.flag("sequence_parallel"); });
  map.field([&] { parse_recompute(*map.text("recompute"), &p.recompute); });
  map.field([&] {
    // Megatron-Core TransformerConfig.__post_init__'s allowed modules; the gated-delta and
    // hyper-connection ones belong to architectures trident does not model.
    if (!map.has("recompute_modules")) return;
    p.recompute_modules =
        read_module_list(map, "recompute_modules", parse_recompute_module,
                         {"core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe",
                          "shared_experts", "gdn_norm_out", "gdp_in_proj", "gdp_qkv", "mhc"});
  });
  map.field([&] {
    // distributed_optimizer is the alias of sharding strategy optim: one derives the other.
    const std::optional<bool> distopt = map.flag("distributed_optimizer");
    const std::optional<std::string> strategy = map.text("data_parallel_sharding_strategy");
    if (strategy) {
      parse_dp_sharding(*strategy, &p.dp_sharding);
      if (distopt && *distopt != (p.dp_sharding != DpSharding::kNoShard)) {
        map.fail("distributed_optimizer",
                 std::string(*distopt ? "true" : "false") +
                     " contradicts data_parallel_sharding_strategy " + *strategy +
                     " (expected distributed_optimizer true with optim, optim_grads or "
                     "optim_grads_params, false with no_shard; give one of the two)");
      }
    } else if (map.flag("fsdp").value_or(false)) {
      // Megatron-Core FSDP without a strategy: its default, optim_grads_params.
      if (distopt && !*distopt) {
        map.fail("distributed_optimizer",
                 "false contradicts fsdp true (expected fsdp with a sharded strategy; give "
                 "data_parallel_sharding_strategy no_shard to shard nothing)");
      }
      p.dp_sharding = DpSharding::kOptimGradsParams;
    } else {
      p.dp_sharding = distopt.value_or(false) ? DpSharding::kOptim : DpSharding::kNoShard;
    }
    p.distributed_optimizer = p.dp_sharding != DpSharding::kNoShard;
    if (map.has("fsdp") && !*map.flag("fsdp") && p.dp_sharding == DpSharding::kOptimGradsParams) {
      map.fail("fsdp",
               "false contradicts data_parallel_sharding_strategy optim_grads_params (expected "
               "fsdp true: only Megatron-Core FSDP shards the weights)");
    }
  });
  map.field([&] { p.overlap_grad_reduce = *map.flag("overlap_grad_reduce"); });
  map.field([&] { p.overlap_param_gather = *map.flag("overlap_param_gather"); });
  map.field([&] {
    p.distributed_optimizer_instances =
        static_cast<int>(*map.integer("num_distributed_optimizer_instances"));
  });
  map.field([&] { p.grad_reduce_in_bf16 = *map.flag("grad_reduce_in_bf16"); });
  map.field([&] { p.precision_aware_optimizer = *map.flag("use_precision_aware_optimizer"); });
  map.field([&] { p.store_param_remainders = *map.flag("store_param_remainders"); });
  for (const auto& [key, field] :
       {std::pair<const char*, StateDtype*>{"main_params_dtype", &p.main_params_dtype},
        {"main_grads_dtype", &p.main_grads_dtype},
        {"exp_avg_dtype", &p.exp_avg_dtype},
        {"exp_avg_sq_dtype", &p.exp_avg_sq_dtype}}) {
    map.field([&, key = key, field = field] {
      parse_state_dtype(*map.text(key), field);
      if (*field != StateDtype::kFp32 && !p.precision_aware_optimizer) {
        map.fail(key, std::string(state_dtype_name(*field)) +
                          " needs use_precision_aware_optimizer: true (Megatron-LM keeps the "
                          "optimizer state in fp32 otherwise)");
      }
    });
  }
  map.field([&] { p.tp_comm_overlap = *map.flag("tp_comm_overlap"); });
  map.field([&] { p.gpus_per_island = static_cast<int>(*map.integer("gpus_per_island")); });
  map.field([&] { p.grad_bucket_size = map.integer("grad_bucket_size").value_or(0); });
  map.field([&] { p.train_tokens = map.number("train_tokens").value_or(0); });
  map.field([&] {
    const std::optional<double> price = map.number("gpu_hour_price");
    p.has_gpu_hour_price = price.has_value();
    p.gpu_hour_price = price.value_or(0);
  });
  map.field([&] {
    if (map.has("placement")) p.placement = read_placement(map);
  });
  map.field([&] { parse_precision(*map.text("precision"), &p.precision); });
  map.field([&] {
    parse_attention_backend(*map.text("attention_backend"), &p.attention_backend);
    // auto is the stack's pick: PyTorch SDPA runs FlashAttention-2 on every GPU.
    if (p.attention_backend == AttentionBackend::kAuto &&
        p.stack.attention == StackAttention::kSdpa)
      p.attention_backend = AttentionBackend::kFlash2;
  });
  map.field([&] { parse_fp8_recipe(*map.text("fp8_recipe"), &p.fp8_recipe); });
  map.field([&] { p.fp8_attention = *map.flag("fp8_attention"); });
  map.field([&] { p.fp8_param_gather = *map.flag("fp8_param_gather"); });
  // fp4_recipe has one value, nvfp4 (the row's choice list refuses others).
  map.field([&] { p.fp4_recipe = Fp4Recipe::kNvfp4; });
  map.field([&] { p.first_last_layers_bf16 = *map.flag("first_last_layers_bf16"); });
  map.field([&] {
    p.num_layers_at_start_in_bf16 = static_cast<int>(*map.integer("num_layers_at_start_in_bf16"));
  });
  map.field([&] {
    p.num_layers_at_end_in_bf16 = static_cast<int>(*map.integer("num_layers_at_end_in_bf16"));
  });
  map.field([&] { p.optimizer_cpu_offload = *map.flag("optimizer_cpu_offload"); });
  map.field([&] { p.optimizer_offload_fraction = *map.number("optimizer_offload_fraction"); });
  map.field([&] { p.overlap_cpu_optimizer_d2h_h2d = *map.flag("overlap_cpu_optimizer_d2h_h2d"); });
  map.field(
      [&] { p.expert_parallel = static_cast<int>(*map.integer("expert_model_parallel_size")); });
  map.field([&] {
    p.expert_tensor_parallel =
        static_cast<int>(map.integer("expert_tensor_parallel_size").value_or(p.tensor));
  });
  map.field([&] {
    const std::string dispatcher = *map.text("moe_token_dispatcher_type");
    p.moe_dispatcher = dispatcher == "alltoall" ? MoeDispatcher::kAllToAll
                       : dispatcher == "flex"   ? MoeDispatcher::kFlex
                                                : MoeDispatcher::kAllGather;
  });
  map.field([&] { p.moe_capacity_factor = map.number("moe_expert_capacity_factor").value_or(0); });
  map.field([&] { p.moe_pad_to_capacity = *map.flag("moe_pad_expert_input_to_capacity"); });
  map.field([&] { p.moe_load_imbalance = *map.number("moe_expert_load_imbalance"); });
  map.field([&] { p.moe_shared_expert_overlap = *map.flag("moe_shared_expert_overlap"); });
  map.field([&] {
    p.moe_flex_backend = *map.text("moe_flex_dispatcher_backend") == "hybridep"
                             ? MoeFlexBackend::kHybridEp
                             : MoeFlexBackend::kDeepEp;
  });
  map.field([&] { p.moe_grouped_gemm = *map.flag("moe_grouped_gemm"); });
  map.field([&] {
    // Megatron-Core router.py: random logits make the routing balanced, which is imbalance 1.
    if (*map.flag("moe_router_force_load_balancing") && p.moe_load_imbalance != 1) {
      map.fail("moe_expert_load_imbalance",
               "moe_expert_load_imbalance " + short_text(p.moe_load_imbalance) +
                   " contradicts moe_router_force_load_balancing true (expected 1: forced "
                   "balancing routes every expert the same share)");
    }
  });
  map.field([&] {
    if (auto n = map.integer("expert_data_parallel")) given->expert_data_parallel = *n;
    if (auto n = map.integer("gradient_accumulation")) given->gradient_accumulation = *n;
  });
  map.field([&] {
    // Megatron-LM arguments.py: without the interleaved schedule overlap_p2p_comm is set to
    // false, as trident's sends behave either way; with it, blocking sends are not modelled.
    if (!*map.flag("overlap_p2p_comm") && p.virtual_stages > 1) {
      map.fail("overlap_p2p_comm",
               "false with virtual_stages " + std::to_string(p.virtual_stages) +
                   " is not modelled (trident's interleaved pipeline sends never hold the "
                   "sender; expected true, Megatron's default)");
    }
  });
  map.field(
      [&] { p.overlap_moe_expert_parallel_comm = *map.flag("overlap_moe_expert_parallel_comm"); });
  map.field([&] {
    p.moe_expert_rank_capacity_factor = map.number("moe_expert_rank_capacity_factor").value_or(0);
  });
  map.field([&] { p.moe_paged_stash = *map.flag("moe_paged_stash"); });
  map.field([&] {
    const std::string impl = *map.text("cuda_graph_impl");
    p.cuda_graph_impl = impl == "local"                ? CudaGraphImpl::kLocal
                        : impl == "transformer_engine" ? CudaGraphImpl::kTransformerEngine
                                                       : CudaGraphImpl::kNone;
  });
  map.field([&] {
    if (!map.has("cuda_graph_scope")) return;
    p.cuda_graph_scope = read_module_list(
        map, "cuda_graph_scope", parse_cuda_graph_module,
        {"attn", "mlp", "moe", "moe_router", "moe_preprocess", "full_iteration", "mamba"});
  });
  map.field([&] {
    if (!map.has("activation_offload")) return;
    p.activation_offload =
        read_module_list(map, "activation_offload", parse_activation_offload,
                         {"attn_norm", "qkv_linear", "core_attn", "attn_proj", "mlp_norm",
                          "expert_fc1", "moe_act", "fused_group_mlp", "gdp_qkv"});
  });

  map.field([&] {
    if (map.has("pipeline_layers")) p.pipeline_layers = read_layer_list(map);
  });
  map.field([&] {
    if (auto n = map.integer("decoder_first_pipeline_num_layers")) {
      given->first_stage_layers = static_cast<int>(*n);
    }
  });
  map.field([&] {
    if (auto n = map.integer("decoder_last_pipeline_num_layers")) {
      given->last_stage_layers = static_cast<int>(*n);
    }
  });
  return p;
}

}  // namespace trident
