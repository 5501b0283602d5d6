#include "config/megatron_special_args.h"

#include <cstdlib>
#include <sstream>
#include <utility>

#include "config/moe_layer_freq.h"
#include "core/errors.h"

namespace trident {
namespace {

// Delayed scaling's knobs (Megatron's arguments.py: --fp8-margin an int, --fp8-amax-history-len
// an int, --fp8-amax-compute-algo most_recent or max): checked, then listed as ignored.
void fp8_scaling_knobs(const std::map<std::string, std::string>& given,
                       std::vector<std::string>* ignored, std::vector<std::string>* refused) {
  const auto integer = [](const std::string& v, long low) {
    char* end = nullptr;
    const long n = std::strtol(v.c_str(), &end, 10);
    return !v.empty() && *end == '\0' && n >= low && n <= (1L << 30);
  };
  const std::string why =
      " (delayed scaling's amax history: the same casts, amax reduction and GEMMs)";
  if (const auto it = given.find("--fp8-amax-history-len"); it != given.end()) {
    if (integer(it->second, 1)) {
      ignored->push_back(it->first + " " + it->second + why);
    } else {
      refused->push_back(it->first + " " + excerpt(it->second) + " (expected an integer >= 1)");
    }
  }
  if (const auto it = given.find("--fp8-amax-compute-algo"); it != given.end()) {
    if (it->second == "max" || it->second == "most_recent") {
      ignored->push_back(it->first + " " + it->second + why);
    } else {
      refused->push_back(it->first + " " + excerpt(it->second) + " (expected max or most_recent)");
    }
  }
  if (const auto it = given.find("--fp8-margin"); it != given.end()) {
    if (integer(it->second, 0)) {
      ignored->push_back(it->first + " " + it->second +
                         " (the scaling margin: the same casts and GEMMs)");
    } else {
      refused->push_back(it->first + " " + excerpt(it->second) + " (expected an integer >= 0)");
    }
  }
}

// CUDA graphs (megatron/training/arguments.py; megatron/core/transformer/cuda_graph_config.py):
// --cuda-graph-impl none | local | transformer_engine | full_iteration (the newer spelling of
// local with scope full_iteration), the older --enable-cuda-graph (local) and
// --external-cuda-graph (transformer_engine), and --cuda-graph-scope / --cuda-graph-modules.
void cuda_graph_plan(const std::map<std::string, std::string>& given,
                     std::map<std::string, std::string>* plan, std::vector<std::string>* refused) {
  std::string impl;
  if (given.count("--enable-cuda-graph")) impl = "local";
  if (given.count("--external-cuda-graph")) impl = "transformer_engine";
  std::string scope;
  for (const char* key : {"--cuda-graph-scope", "--cuda-graph-modules"}) {
    if (const auto it = given.find(key); it != given.end()) {
      std::istringstream words(it->second);
      for (std::string w; words >> w;) scope += (scope.empty() ? "" : ", ") + w;
    }
  }
  if (const auto it = given.find("--cuda-graph-impl"); it != given.end()) {
    impl = it->second;
    if (impl == "full_iteration") {
      impl = "local";
      scope = "full_iteration";
    } else if (impl != "none" && impl != "local" && impl != "transformer_engine") {
      refused->push_back("--cuda-graph-impl " + excerpt(impl) +
                         " (expected none, local, transformer_engine or full_iteration)");
      return;
    }
  }
  if (!impl.empty()) (*plan)["cuda_graph_impl"] = impl;
  if (!scope.empty()) (*plan)["cuda_graph_scope"] = "[" + scope + "]";
}

}  // namespace

void translate_special_args(const std::map<std::string, std::string>& given,
                            std::map<std::string, std::string>* model_settings,
                            std::map<std::string, std::string>* plan_settings,
                            std::vector<std::string>* ignored, std::vector<std::string>* refused) {
  std::map<std::string, std::string>& model = *model_settings;
  std::map<std::string, std::string>& plan = *plan_settings;
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
      refused->push_back("--cp-comm-type " + c +
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
      refused->push_back("--moe-token-dispatcher-type " + dispatcher +
                         " (expected alltoall, allgather or flex)");
    }
  }
  if (has("--moe-enable-deepep") && dispatcher != "flex") {
    refused->push_back(
        "--moe-enable-deepep (DeepEP runs only with --moe-token-dispatcher-type flex)");
  }
  if (has("--moe-flex-dispatcher-backend")) {
    const std::string b = get("--moe-flex-dispatcher-backend");
    if (b == "deepep" || b == "hybridep") {
      plan["moe_flex_dispatcher_backend"] = b;
    } else {
      refused->push_back("--moe-flex-dispatcher-backend " + b +
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
      refused->push_back("--moe-layer-freq " + get("--moe-layer-freq") +
                         " (expected an integer or a list such as ([0]*3+[1]*58))");
    }
  }
  // Megatron-LM arguments.py tuple_type: "L,R" (parentheses and blanks allowed).
  if (has("--window-size")) {
    std::string v = get("--window-size"), digits;
    for (char c : v) {
      if (c != '(' && c != ')' && c != ' ') digits += c;
    }
    const std::size_t comma = digits.find(',');
    const auto extent = [](const std::string& x) {
      char* end = nullptr;
      const long n = std::strtol(x.c_str(), &end, 10);
      return !x.empty() && *end == '\0' && n >= -1 && n <= (1L << 30);
    };
    if (comma != std::string::npos && extent(digits.substr(0, comma)) &&
        extent(digits.substr(comma + 1))) {
      // L -1: an infinite window, plain causal attention (no setting).
      if (digits.substr(0, comma) != "-1")
        model["window_size"] =
            "[" + digits.substr(0, comma) + ", " + digits.substr(comma + 1) + "]";
    } else {
      refused->push_back("--window-size " + v + " (expected two integers L,R such as 128,0)");
    }
  }
  for (const auto& [arg, key] :
       {std::pair<const char*, const char*>{"--window-attn-skip-freq", "window_attn_skip_freq"},
        {"--no-rope-freq", "no_rope_freq"}}) {
    if (!has(arg)) continue;
    std::string pattern;
    if (parse_moe_layer_freq(get(arg), &pattern)) {
      model[key] = pattern;
    } else {
      refused->push_back(std::string(arg) + " " + get(arg) +
                         " (expected an integer or a list such as ([1]*3+[0]*1)*12)");
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
      refused->push_back("--attention-backend " + b +
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
      refused->push_back("--position-embedding-type " + t + " (not modelled)");
    }
  } else if (has("--use-rotary-position-embeddings")) {
    model["position_embedding"] = "rope";
  } else {
    model["position_embedding"] = "learned";  // Megatron's default
  }
  if (has("--group-query-attention") && has("--num-query-groups")) {
    model["num_query_groups"] = get("--num-query-groups");
  } else if (has("--num-query-groups")) {
    ignored->push_back("--num-query-groups " + get("--num-query-groups") +
                       " (Megatron uses it only with --group-query-attention)");
  }
  if (has("--recompute-method") && plan.count("recompute") && plan["recompute"] == "full" &&
      get("--recompute-method") == "block") {
    refused->push_back(
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
    ignored->push_back("--recompute-modules " + get("--recompute-modules") +
                       " (Megatron applies it only with --recompute-granularity selective)");
  }
  cuda_graph_plan(given, &plan, refused);
  fp8_scaling_knobs(given, ignored, refused);
  if (has("--fine-grained-activation-offloading") && has("--offload-modules")) {
    std::string list;
    std::istringstream modules(get("--offload-modules"));
    for (std::string m; modules >> m;) list += (list.empty() ? "" : ", ") + m;
    plan["activation_offload"] = "[" + list + "]";
  } else if (has("--offload-modules")) {
    ignored->push_back("--offload-modules " + get("--offload-modules") +
                       " (Megatron applies it only with --fine-grained-activation-offloading)");
  } else if (has("--fine-grained-activation-offloading")) {
    ignored->push_back("--fine-grained-activation-offloading (no --offload-modules)");
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
}

}  // namespace trident
