#include "config/megatron_args.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "config/moe_layer_freq.h"
#include "config/pipeline_layout.h"
#include "config/shell_words.h"
#include "core/errors.h"

namespace trident {
namespace {

// What an argument does to a trident scenario.
enum class Use {
  kModel,    // a model setting (value, or `true` for a flag)
  kPlan,     // a plan setting
  kSpecial,  // handled after all are read (precision, virtual stages, vocabulary, ...)
  kIgnored,  // does not change one step's time or memory
  kRefused,  // changes the step; trident does not model it
};

struct Arg {
  Use use;
  bool flag;           // takes no value
  const char* target;  // the trident key (kModel/kPlan), or why (kIgnored/kRefused)
};

const std::map<std::string, Arg>& known_args() {
  static const std::map<std::string, Arg> args = {
      {"--num-layers", {Use::kModel, false, "num_layers"}},
      {"--hidden-size", {Use::kModel, false, "hidden_size"}},
      {"--num-attention-heads", {Use::kModel, false, "num_attention_heads"}},
      {"--num-query-groups", {Use::kSpecial, false, ""}},
      {"--group-query-attention", {Use::kSpecial, true, ""}},
      {"--ffn-hidden-size", {Use::kModel, false, "ffn_hidden_size"}},
      {"--seq-length", {Use::kModel, false, "seq_length"}},
      {"--swiglu", {Use::kModel, true, "swiglu"}},
      {"--untie-embeddings-and-output-weights",
       {Use::kModel, true, "untie_embeddings_and_output_weights"}},
      {"--position-embedding-type", {Use::kSpecial, false, ""}},
      {"--use-rotary-position-embeddings", {Use::kSpecial, true, ""}},
      {"--vocab-size", {Use::kSpecial, false, ""}},
      {"--padded-vocab-size", {Use::kSpecial, false, ""}},
      {"--make-vocab-size-divisible-by", {Use::kSpecial, false, ""}},
      {"--tensor-model-parallel-size", {Use::kPlan, false, "tensor_parallel"}},
      {"--pipeline-model-parallel-size", {Use::kPlan, false, "pipeline_parallel"}},
      {"--num-layers-per-virtual-pipeline-stage", {Use::kSpecial, false, ""}},
      {"--num-virtual-stages-per-pipeline-rank", {Use::kSpecial, false, ""}},
      {"--micro-batch-size", {Use::kPlan, false, "micro_batch_size"}},
      {"--global-batch-size", {Use::kPlan, false, "global_batch_size"}},
      {"--sequence-parallel", {Use::kPlan, true, "sequence_parallel"}},
      {"--use-distributed-optimizer", {Use::kPlan, true, "distributed_optimizer"}},
      {"--overlap-grad-reduce", {Use::kPlan, true, "overlap_grad_reduce"}},
      {"--ddp-bucket-size", {Use::kPlan, false, "grad_bucket_size"}},
      {"--overlap-param-gather", {Use::kPlan, true, "overlap_param_gather"}},
      {"--grad-reduce-in-bf16", {Use::kPlan, true, "grad_reduce_in_bf16"}},
      {"--tp-comm-overlap", {Use::kPlan, true, "tp_comm_overlap"}},
      {"--use-precision-aware-optimizer", {Use::kPlan, true, "use_precision_aware_optimizer"}},
      {"--main-params-dtype", {Use::kPlan, false, "main_params_dtype"}},
      {"--main-grads-dtype", {Use::kPlan, false, "main_grads_dtype"}},
      {"--exp-avg-dtype", {Use::kPlan, false, "exp_avg_dtype"}},
      {"--exp-avg-sq-dtype", {Use::kPlan, false, "exp_avg_sq_dtype"}},
      {"--data-parallel-sharding-strategy", {Use::kPlan, false, "data_parallel_sharding_strategy"}},
      // Megatron-Core FSDP: plan.fsdp (optim_grads_params unless the strategy is given).
      {"--use-megatron-fsdp", {Use::kPlan, true, "fsdp"}},
      {"--use-custom-fsdp", {Use::kPlan, true, "fsdp"}},
      // Averaging inside the reduction instead of scaling before it: the same bytes.
      {"--ddp-average-in-collective", {Use::kIgnored, true, "same bytes and flows"}},
      {"--recompute-granularity", {Use::kPlan, false, "recompute"}},
      {"--recompute-method", {Use::kSpecial, false, ""}},
      {"--recompute-num-layers", {Use::kSpecial, false, ""}},
      {"--decoder-first-pipeline-num-layers",
       {Use::kPlan, false, "decoder_first_pipeline_num_layers"}},
      {"--decoder-last-pipeline-num-layers",
       {Use::kPlan, false, "decoder_last_pipeline_num_layers"}},
      {"--pipeline-model-parallel-layout", {Use::kPlan, false, "pipeline_model_parallel_layout"}},
      {"--account-for-embedding-in-pipeline-split",
       {Use::kPlan, true, "account_for_embedding_in_pipeline_split"}},
      {"--account-for-loss-in-pipeline-split",
       {Use::kPlan, true, "account_for_loss_in_pipeline_split"}},
      {"--bf16", {Use::kSpecial, true, ""}},
      {"--fp16", {Use::kSpecial, true, ""}},
      {"--fp8-format", {Use::kSpecial, false, ""}},
      {"--context-parallel-size", {Use::kPlan, false, "context_parallel"}},
      {"--cp-comm-type", {Use::kSpecial, false, ""}},
      {"--expert-model-parallel-size", {Use::kPlan, false, "expert_model_parallel_size"}},
      {"--expert-tensor-parallel-size", {Use::kPlan, false, "expert_tensor_parallel_size"}},
      {"--num-experts", {Use::kModel, false, "num_experts"}},
      {"--moe-router-topk", {Use::kModel, false, "moe_router_topk"}},
      {"--moe-ffn-hidden-size", {Use::kModel, false, "moe_ffn_hidden_size"}},
      {"--moe-shared-expert-intermediate-size",
       {Use::kModel, false, "moe_shared_expert_intermediate_size"}},
      {"--moe-layer-freq", {Use::kSpecial, false, ""}},
      {"--moe-token-dispatcher-type", {Use::kSpecial, false, ""}},
      // The flex dispatcher's backend: --moe-enable-deepep (older Megatron-Core) or
      // --moe-flex-dispatcher-backend (newer; deepep by default).
      {"--moe-enable-deepep", {Use::kSpecial, true, ""}},
      {"--moe-flex-dispatcher-backend", {Use::kSpecial, false, ""}},
      {"--moe-router-num-groups", {Use::kModel, false, "moe_router_num_groups"}},
      {"--moe-router-group-topk", {Use::kModel, false, "moe_router_group_topk"}},
      // Router details that decide which experts a token picks, not how many tokens move:
      // model settings that trident validates (the expert bias needs sigmoid scores) and routes
      // balanced (plus moe_expert_load_imbalance) whatever they say.
      {"--moe-router-score-function", {Use::kModel, false, "moe_router_score_function"}},
      {"--moe-router-enable-expert-bias", {Use::kModel, true, "moe_router_enable_expert_bias"}},
      {"--moe-router-bias-update-rate", {Use::kIgnored, false, "the expert bias's update rate"}},
      {"--moe-router-topk-scaling-factor", {Use::kModel, false, "moe_router_topk_scaling_factor"}},
      {"--moe-router-pre-softmax", {Use::kModel, true, "moe_router_pre_softmax"}},
      {"--moe-router-force-load-balancing", {Use::kPlan, true, "moe_router_force_load_balancing"}},
      {"--moe-z-loss-coeff", {Use::kIgnored, false, "a loss coefficient"}},
      {"--moe-token-drop-policy",
       {Use::kIgnored, false, "which tokens are dropped, not how many (the capacity factor)"}},
      {"--moe-router-dtype",
       {Use::kIgnored, false,
        "the router's softmax and top-k precision; trident costs the T x E router GEMM at 16 "
        "bits either way (a small share of the layer)"}},
      {"--moe-permute-fusion",
       {Use::kIgnored, true, "trident costs the permutation by its HBM bytes, fused or not"}},
      {"--moe-router-fusion",
       {Use::kIgnored, true, "trident costs the router's top-k by its HBM bytes, fused or not"}},
      {"--moe-deepep-num-sms",
       {Use::kIgnored, false,
        "SMs DeepEP's kernels occupy: not modelled (the dispatch and combine do not slow the "
        "compute beside them)"}},
      {"--moe-expert-capacity-factor", {Use::kPlan, false, "moe_expert_capacity_factor"}},
      {"--moe-pad-expert-input-to-capacity",
       {Use::kPlan, true, "moe_pad_expert_input_to_capacity"}},
      {"--moe-shared-expert-overlap", {Use::kPlan, true, "moe_shared_expert_overlap"}},
      // Megatron's default is false (SequentialMLP); set after the loop for MoE models.
      {"--moe-grouped-gemm", {Use::kSpecial, true, ""}},
      {"--disable-bias-linear", {Use::kSpecial, true, ""}},
      {"--qk-layernorm", {Use::kModel, true, "qk_layernorm"}},
      {"--rotary-base", {Use::kModel, false, "rotary_base"}},
      {"--rotary-scaling-factor", {Use::kModel, false, "rotary_scaling_factor"}},
      {"--no-overlap-p2p-communication", {Use::kSpecial, true, ""}},
      // Megatron-Core fine-grained activation offloading (TransformerConfig.offload_modules):
      // plan.activation_offload, with --offload-modules.
      {"--fine-grained-activation-offloading", {Use::kSpecial, true, ""}},
      {"--moe-router-load-balancing-type",
       {Use::kIgnored, false,
        "the balancing loss; routing imbalance is "
        "plan.moe_expert_load_imbalance"}},
      {"--moe-aux-loss-coeff", {Use::kIgnored, false, "a loss coefficient"}},
      {"--multi-latent-attention", {Use::kModel, true, "multi_latent_attention"}},
      {"--q-lora-rank", {Use::kModel, false, "q_lora_rank"}},
      {"--kv-lora-rank", {Use::kModel, false, "kv_lora_rank"}},
      {"--qk-head-dim", {Use::kModel, false, "qk_head_dim"}},
      {"--qk-pos-emb-head-dim", {Use::kModel, false, "qk_pos_emb_head_dim"}},
      {"--v-head-dim", {Use::kModel, false, "v_head_dim"}},
      {"--kv-channels", {Use::kModel, false, "kv_channels"}},
      {"--attention-backend", {Use::kSpecial, false, ""}},
      // Refused: they change the step and trident does not model them.
      {"--use-flash-attn", {Use::kSpecial, true, ""}},
      {"--attention-dropout", {Use::kModel, false, "attention_dropout"}},
      {"--hidden-dropout", {Use::kModel, false, "hidden_dropout"}},
      {"--normalization", {Use::kModel, false, "normalization"}},
      {"--fp8-recipe", {Use::kPlan, false, "fp8_recipe"}},
      {"--fp8-dot-product-attention", {Use::kPlan, true, "fp8_attention"}},
      {"--fp8-param-gather", {Use::kPlan, true, "fp8_param_gather"}},
      {"--fp4-format", {Use::kSpecial, false, ""}},
      {"--fp4-recipe", {Use::kPlan, false, "fp4_recipe"}},
      {"--first-last-layers-bf16", {Use::kPlan, true, "first_last_layers_bf16"}},
      {"--num-layers-at-start-in-bf16", {Use::kPlan, false, "num_layers_at_start_in_bf16"}},
      {"--num-layers-at-end-in-bf16", {Use::kPlan, false, "num_layers_at_end_in_bf16"}},
      {"--optimizer-cpu-offload", {Use::kPlan, true, "optimizer_cpu_offload"}},
      {"--optimizer-offload-fraction", {Use::kPlan, false, "optimizer_offload_fraction"}},
      {"--overlap-cpu-optimizer-d2h-h2d", {Use::kPlan, true, "overlap_cpu_optimizer_d2h_h2d"}},
      // Megatron-Core's optimizer/__init__.py resets the GPU optimizer to TE's FusedAdam for
      // adam right after this flag chooses torch's, and the CPU one is torch's either way.
      {"--use-torch-optimizer-for-cpu-offload",
       {Use::kIgnored, true, "the GPU share runs FusedAdam for adam either way"}},
      {"--num-layers-per-stage", {Use::kRefused, false, "use --decoder-first/last-..."}},
      {"--encoder-num-layers", {Use::kRefused, false, "encoders are not modelled"}},
  };
  return args;
}

// Prefixes and names of arguments that do not change one step (logging, data, checkpoints,
// optimizer hyper-parameters, initialisation, numerics of the same cost).
bool is_ignored(const std::string& name, std::string* why) {
  static const char* const prefixes[] = {
      "--log",
      "--tensorboard",
      "--wandb",
      "--data-",
      "--save",
      "--load",
      "--eval-",
      "--lr",
      "--min-lr",
      "--adam-",
      "--weight-decay",
      "--clip-grad",
      "--seed",
      "--init-method",
      "--train-iters",
      "--train-samples",
      "--exit-",
      "--tokenizer-",
      "--vocab-file",
      "--merge-file",
      "--split",
      "--ckpt-",
      "--no-load-",
      "--finetune",
      "--timing-",
      "--num-workers",
      "--dataloader-",
      "--mock-data",
      "--distributed-backend",
      "--distributed-timeout",
      "--use-mcore-models",
      "--transformer-impl",
      "--norm-epsilon",
      "--rotary-",
      "--no-masked-softmax-fusion",
      "--no-bias-",
      "--attention-softmax-in-fp32",
      "--accumulate-allreduce-grads-in-fp32",
      "--max-position-embeddings",
      "--use-checkpoint-",
      "--async-save",
      "--no-gradient-",
      "--manual-gc",
      "--profile",
      "--use-pytorch-profiler",
      "--record-memory-history",
      "--rerun-",
      "--check-for-nan",
      "--bias-",
      "--no-rope-fusion",
      "--apply-layernorm-1p",
      "--hysteresis",
      "--loss-scale",
      "--initial-loss-scale",
      "--min-loss-scale",
      "--use-cpu-initialization",
  };
  for (const char* p : prefixes) {
    if (name.rfind(p, 0) == 0) {
      *why = "does not change the step's time or memory in trident";
      return true;
    }
  }
  return false;
}

// `value` as a YAML scalar: as written when plain, else single-quoted (a string the loader
// then refuses where a number is expected, naming the key).
std::string yaml_scalar(const std::string& value) {
  bool plain = !value.empty();
  for (char c : value) {
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ||
                      c == '_' || c == '+');
  }
  if (plain) return value;
  // A flow list of integers (the expanded --moe-layer-freq) or of module names
  // (--recompute-modules) stays a list.
  if (value.size() >= 2 && value.front() == '[' && value.back() == ']' &&
      value.find_first_not_of("0123456789, abcdefghijklmnopqrstuvwxyz_", 1) == value.size() - 1) {
    return value;
  }
  std::string q = "'";
  for (char c : value) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

}  // namespace

MegatronScenario translate_megatron_args(const std::string& text, const std::string& label,
                                         const std::string& cluster) {
  const std::vector<ShellWord> shell_words = split_shell_words(text, label);
  std::vector<std::string> words;
  std::vector<int> lines;  // of each word
  for (const ShellWord& w : shell_words) words.push_back(w.text), lines.push_back(w.line);
  SourceLocation where;
  where.file = label;

  // The launcher: everything up to the training script (torchrun --nnodes 64 ... x.py).
  std::optional<std::string> nodes;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.size() > 3 && w.compare(w.size() - 3, 3, ".py") == 0) {
      for (size_t j = 0; j < i; ++j) {
        const std::string& l = words[j];
        if (l.rfind("--nnodes=", 0) == 0) nodes = l.substr(9);
        if (l == "--nnodes" && j + 1 < i) nodes = words[j + 1];
      }
      words.erase(words.begin(), words.begin() + static_cast<long>(i) + 1);
      lines.erase(lines.begin(), lines.begin() + static_cast<long>(i) + 1);
      break;
    }
  }

  std::map<std::string, std::string> model, plan;  // key -> YAML value
  std::map<std::string, std::string> given;        // every modelled argument -> its value
  std::vector<std::string> refused, unknown;
  std::map<std::string, int> line_of;  // each argument's (first) line
  MegatronScenario out;
  for (size_t i = 0; i < words.size(); ++i) {
    std::string name = words[i], value;
    bool inline_value = false;
    if (name.rfind("--", 0) != 0) {
      line_of.emplace(name, lines[i]);
      unknown.push_back("`" + excerpt(name, 60) + "` (expected --option)");
      continue;
    }
    const size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
    }
    std::replace(name.begin(), name.end(), '_', '-');
    line_of.emplace(name, lines[i]);
    const auto takes_value = [&] {
      if (!inline_value && i + 1 < words.size() && words[i + 1].rfind("--", 0) != 0) {
        value = words[++i];
      }
    };
    // An nargs='+' argument's value: every word up to the next option, space-separated.
    const auto all_values = [&] {
      std::string all = inline_value ? value : "";
      while (i + 1 < words.size() && words[i + 1].rfind("--", 0) != 0) {
        all += (all.empty() ? "" : " ") + words[++i];
      }
      return all;
    };
    if (name.rfind("--cuda-graph", 0) == 0 || name == "--enable-cuda-graph" ||
        name == "--external-cuda-graph") {
      // CUDA graphs remove host launch gaps; trident times kernels as if the host kept ahead
      // of the GPU. Some take several words (--cuda-graph-scope attn mlp).
      const std::string words_of = all_values();
      out.ignored.push_back(name + (words_of.empty() ? "" : " " + words_of) +
                            " (trident models no host launch gaps for graphs to remove)");
      continue;
    }
    if (name == "--recompute-modules" || name == "--offload-modules") {
      given[name] = all_values();
      continue;
    }
    const auto it = known_args().find(name);
    std::string why;
    if (it == known_args().end()) {
      if (is_ignored(name, &why)) {
        takes_value();
        out.ignored.push_back(name + (value.empty() ? "" : " " + value));
      } else {
        takes_value();
        unknown.push_back(name);
      }
      continue;
    }
    const Arg& arg = it->second;
    if (!arg.flag) takes_value();
    if (!arg.flag && value.empty()) {
      throw ConfigError(where, name + " needs a value");
    }
    switch (arg.use) {
      case Use::kModel:
        model[arg.target] = arg.flag ? "true" : value;
        break;
      case Use::kPlan:
        plan[arg.target] = arg.flag ? "true" : value;
        break;
      case Use::kSpecial:
        given[name] = arg.flag ? "true" : value;
        break;
      case Use::kIgnored:
        out.ignored.push_back(name);
        break;
      case Use::kRefused:
        refused.push_back(name + " (" + arg.target + ")");
        break;
    }
  }

  const auto has = [&](const char* n) { return given.count(n) > 0; };
  const auto get = [&](const char* n) { return given.at(n); };
  // Arguments whose value decides whether trident models them.
  // Megatron's choices (megatron/training/arguments.py) are p2p, a2a, allgather and a2a+p2p;
  // Transformer Engine spells the second all_gather, as trident does.
  if (has("--cp-comm-type")) {
    const std::string c = get("--cp-comm-type");
    if (c == "p2p" || c == "a2a") {
      plan["cp_comm_type"] = c;
    } else if (c == "allgather" || c == "all_gather") {
      plan["cp_comm_type"] = "all_gather";
    } else {
      refused.push_back("--cp-comm-type " + c +
                        " (hierarchical a2a+p2p context parallelism is not modelled)");
    }
  }
  // Megatron-Core's dispatchers (megatron/core/transformer/moe/token_dispatcher.py); flex runs
  // DeepEP's normal kernels (fused_a2a.py), the only flex backend trident models.
  const std::string dispatcher =
      has("--moe-token-dispatcher-type") ? get("--moe-token-dispatcher-type") : "";
  if (!dispatcher.empty()) {
    if (dispatcher == "alltoall" || dispatcher == "allgather" || dispatcher == "flex") {
      plan["moe_token_dispatcher_type"] = dispatcher;
    } else {
      refused.push_back("--moe-token-dispatcher-type " + dispatcher +
                        " (expected alltoall, allgather or flex)");
    }
  }
  if (has("--moe-enable-deepep") && dispatcher != "flex") {
    refused.push_back(
        "--moe-enable-deepep (DeepEP runs only with --moe-token-dispatcher-type flex)");
  }
  if (has("--moe-flex-dispatcher-backend")) {
    const std::string b = get("--moe-flex-dispatcher-backend");
    if (b == "deepep" || b == "hybridep") {
      plan["moe_flex_dispatcher_backend"] = b;
    } else {
      refused.push_back("--moe-flex-dispatcher-backend " + b +
                        " (trident models deepep and hybridep, expected one of them)");
    }
  }
  // Megatron-Core TransformerConfig: add_bias_linear true unless --disable-bias-linear;
  // moe_grouped_gemm false unless --moe-grouped-gemm (SequentialMLP).
  model["add_bias_linear"] = has("--disable-bias-linear") ? "false" : "true";
  if (model.count("num_experts")) {
    plan["moe_grouped_gemm"] = has("--moe-grouped-gemm") ? "true" : "false";
  }
  // Megatron-LM arguments.py: --no-overlap-p2p-communication (dest overlap_p2p_comm).
  if (has("--no-overlap-p2p-communication")) plan["overlap_p2p_comm"] = "false";
  if (has("--moe-layer-freq")) {
    std::string pattern;
    if (parse_moe_layer_freq(get("--moe-layer-freq"), &pattern)) {
      model["moe_layer_freq"] = pattern;
    } else {
      refused.push_back("--moe-layer-freq " + get("--moe-layer-freq") +
                        " (expected an integer or a list such as ([0]*3+[1]*58))");
    }
  }
  // Megatron-Core's backends; `local` is its own unfused implementation. Without either
  // option Megatron picks (auto), as trident's default does.
  if (has("--attention-backend")) {
    const std::string b = get("--attention-backend");
    if (b == "flash" || b == "fused" || b == "unfused" || b == "auto") {
      plan["attention_backend"] = b;
    } else if (b == "local") {
      plan["attention_backend"] = "unfused";
    } else {
      refused.push_back("--attention-backend " + b +
                        " (expected flash, fused, unfused, local "
                        "or auto)");
    }
  } else if (has("--use-flash-attn")) {
    plan["attention_backend"] = "flash";
  }
  if (has("--position-embedding-type")) {
    const std::string t = get("--position-embedding-type");
    if (t == "learned_absolute") {
      model["position_embedding"] = "learned";
    } else if (t == "rope" || t == "none") {
      model["position_embedding"] = "rope";  // no position weights
    } else {
      refused.push_back("--position-embedding-type " + t + " (not modelled)");
    }
  } else if (has("--use-rotary-position-embeddings")) {
    model["position_embedding"] = "rope";
  } else {
    model["position_embedding"] = "learned";  // Megatron's default
  }
  if (has("--group-query-attention") && has("--num-query-groups")) {
    model["num_query_groups"] = get("--num-query-groups");
  } else if (has("--num-query-groups")) {
    out.ignored.push_back("--num-query-groups " + get("--num-query-groups") +
                          " (Megatron uses it only with --group-query-attention)");
  }
  if (has("--recompute-method") && plan.count("recompute") && plan["recompute"] == "full" &&
      get("--recompute-method") == "block") {
    refused.push_back(
        "--recompute-method block (recomputing only some layers is not modelled; "
        "use uniform)");
  }
  if (has("--recompute-modules") && plan.count("recompute") && plan["recompute"] == "selective") {
    // Megatron-Core's selective recomputation re-runs the listed modules (transformer_config.py
    // recompute_modules): plan.recompute_modules, whose reader checks the names.
    std::string list;
    std::istringstream modules(get("--recompute-modules"));
    for (std::string m; modules >> m;) list += (list.empty() ? "" : ", ") + m;
    plan["recompute_modules"] = "[" + list + "]";
  } else if (has("--recompute-modules")) {
    out.ignored.push_back("--recompute-modules " + get("--recompute-modules") +
                          " (Megatron applies it only with --recompute-granularity selective)");
  }
  if (has("--fine-grained-activation-offloading") && has("--offload-modules")) {
    std::string list;
    std::istringstream modules(get("--offload-modules"));
    for (std::string m; modules >> m;) list += (list.empty() ? "" : ", ") + m;
    plan["activation_offload"] = "[" + list + "]";
  } else if (has("--offload-modules")) {
    out.ignored.push_back("--offload-modules " + get("--offload-modules") +
                          " (Megatron applies it only with --fine-grained-activation-offloading)");
  } else if (has("--fine-grained-activation-offloading")) {
    out.ignored.push_back("--fine-grained-activation-offloading (no --offload-modules)");
  }
  if (has("--fp4-format")) {
    plan["precision"] = "fp4";  // e2m1, the only format (--fp4-recipe says the scaling)
  } else if (has("--fp8-format")) {
    plan["precision"] = "fp8";
  } else if (has("--fp16")) {
    plan["precision"] = "fp16";
  } else if (has("--bf16")) {
    plan["precision"] = "bf16";
  } else {
    plan["precision"] = "fp32";  // Megatron without --bf16/--fp16
  }
  if (has("--num-virtual-stages-per-pipeline-rank")) {
    plan["virtual_stages"] = get("--num-virtual-stages-per-pipeline-rank");
  } else if (has("--num-layers-per-virtual-pipeline-stage") && model.count("num_layers")) {
    const long layers = std::atol(model["num_layers"].c_str());
    const long per = std::atol(get("--num-layers-per-virtual-pipeline-stage").c_str());
    const long p =
        plan.count("pipeline_parallel") ? std::atol(plan["pipeline_parallel"].c_str()) : 1;
    if (per < 1 || p < 1 || layers % (per * p) != 0) {
      throw ConfigError(where, "--num-layers-per-virtual-pipeline-stage " +
                                   get("--num-layers-per-virtual-pipeline-stage") +
                                   " does not divide --num-layers over the pipeline stages");
    }
    plan["virtual_stages"] = std::to_string(layers / (per * p));
  }
  bool chunked = plan.count("virtual_stages") && plan["virtual_stages"] != "1";
  if (plan.count("pipeline_model_parallel_layout")) {
    // The layout sets the chunks per rank (a layout that does not parse is reported by the
    // plan reader, at its key).
    std::string why;
    const long p =
        plan.count("pipeline_parallel") ? std::atol(plan["pipeline_parallel"].c_str()) : 1;
    const auto layout =
        parse_pipeline_layout(plan["pipeline_model_parallel_layout"], static_cast<int>(p), &why);
    chunked = chunked || (layout && layout->virtual_stages > 1);
  }
  plan["schedule"] = chunked ? "interleaved-1f1b" : "1f1b";
  // The vocabulary as Megatron pads it: a multiple of make-vocab-size-divisible-by × t.
  if (has("--padded-vocab-size")) {
    model["vocab_size"] = get("--padded-vocab-size");
  } else if (has("--vocab-size")) {
    const long v = std::atol(get("--vocab-size").c_str());
    const long divisible = has("--make-vocab-size-divisible-by")
                               ? std::atol(get("--make-vocab-size-divisible-by").c_str())
                               : 128;
    const long t = plan.count("tensor_parallel") ? std::atol(plan["tensor_parallel"].c_str()) : 1;
    const long multiple = std::max(1L, divisible * t);
    model["vocab_size"] = std::to_string((v + multiple - 1) / multiple * multiple);
  }

  // Each refused or unknown argument with its line; the first one locates the error.
  const auto locate = [&](std::vector<std::string>* entries) {
    for (std::string& e : *entries) {
      std::string name = e.substr(0, e.find(' '));
      name.erase(std::remove(name.begin(), name.end(), '`'), name.end());
      const auto it = line_of.find(name);
      if (it == line_of.end()) continue;
      if (where.line == 0) where.line = it->second, where.key = name;
      const std::string line = "line " + std::to_string(it->second);
      const size_t paren = e.find(" (");
      e = paren == std::string::npos ? e + " (" + line + ")"
                                     : e.substr(0, paren + 2) + line + "; " + e.substr(paren + 2);
    }
  };
  locate(&refused);
  locate(&unknown);
  std::string problems;
  if (!refused.empty()) {
    problems += "changes the step but is not modelled, refused: ";
    for (size_t i = 0; i < refused.size(); ++i) problems += (i ? "; " : "") + refused[i];
  }
  if (!unknown.empty()) {
    problems += std::string(problems.empty() ? "" : "; ") + "unknown to trident, refused: ";
    for (size_t i = 0; i < unknown.size(); ++i) problems += (i ? ", " : "") + unknown[i];
  }
  const std::pair<const char*, const char*> required[] = {
      {"num_layers", "--num-layers"},
      {"hidden_size", "--hidden-size"},
      {"num_attention_heads", "--num-attention-heads"},
      {"seq_length", "--seq-length"},
      {"vocab_size", "--vocab-size (the tokenizer's vocabulary, e.g. 128256 for Llama 3)"}};
  for (const auto& [key, option] : required) {
    if (!model.count(key)) {
      problems += std::string(problems.empty() ? "" : "; ") + "missing " + option;
    }
  }
  if (!plan.count("micro_batch_size")) {
    problems += std::string(problems.empty() ? "" : "; ") + "missing --micro-batch-size";
  }
  if (!problems.empty()) throw ConfigError(where, problems);

  std::string y = "# Translated by trident from the Megatron-LM launch line in " + label + "\n";
  y += "name: megatron-args\n";
  y += "description: " + model["num_layers"] + " layers, hidden " + model["hidden_size"] +
       ", from a Megatron-LM launch line\n";
  y += "cluster: " + yaml_scalar(cluster) + "\n";
  if (nodes) y += "overrides:\n  cluster.nodes: " + yaml_scalar(*nodes) + "  # torchrun --nnodes\n";
  y += "model:\n  name: megatron-model\n";
  for (const auto& [k, v] : model) y += "  " + k + ": " + yaml_scalar(v) + "\n";
  y += "plan:\n";
  for (const auto& [k, v] : plan) y += "  " + k + ": " + yaml_scalar(v) + "\n";
  out.yaml = y;
  return out;
}

}  // namespace trident
