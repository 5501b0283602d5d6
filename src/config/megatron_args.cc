#include "config/megatron_args.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "config/megatron_arg_table.h"
#include "config/megatron_special_args.h"
#include "config/pipeline_layout.h"
#include "config/shell_words.h"
#include "core/errors.h"

namespace trident {
namespace {

using megatron::Arg;
using megatron::is_ignored;
using megatron::known_args;
using megatron::Use;

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

// Whether the dotted `key` ("plan.schedule") is among the translated settings.
bool find_path_key(const std::string& key, const std::map<std::string, std::string>& model,
                   const std::map<std::string, std::string>& plan) {
  if (key.rfind("model.", 0) == 0) return model.count(key.substr(6)) > 0;
  if (key.rfind("plan.", 0) == 0) return plan.count(key.substr(5)) > 0;
  return false;
}

}  // namespace

MegatronScenario translate_megatron_args(const std::string& text, const std::string& label,
                                         const std::string& cluster, const ShellEnvironment& env) {
  SourceLocation where;
  where.file = label;
  const auto at = [&](const ShellWord& w, const std::string& key) {
    return SourceLocation{label, w.line, w.column, key};
  };
  // Words holding a variable without a value where its value matters, with where and why.
  std::vector<std::string> unresolved;
  const auto unknown_value = [&](const ShellWord& w, const std::string& key,
                                 const std::string& what) {
    if (where.line == 0) where = at(w, key);
    unresolved.push_back("`" + excerpt(w.unresolved) + "` (line " + std::to_string(w.line) +
                         ", column " + std::to_string(w.column) + "), " + what);
  };

  // The launcher: everything up to the training script (torchrun --nnodes 64 ... x.py) in
  // the command that runs it; a file without one is all arguments.
  const std::vector<std::vector<ShellWord>> commands = split_shell_commands(text, label, env);
  std::vector<ShellWord> launcher, words;
  const auto is_script = [](const ShellWord& w) {
    return w.unresolved.empty() && w.text.size() > 3 &&
           w.text.compare(w.text.size() - 3, 3, ".py") == 0;
  };
  for (const std::vector<ShellWord>& command : commands) {
    const auto script = std::find_if(command.begin(), command.end(), is_script);
    if (script != command.end()) {
      launcher.assign(command.begin(), script);
      words.assign(script + 1, command.end());
      break;
    }
  }
  if (launcher.empty() && words.empty()) {
    for (const std::vector<ShellWord>& command : commands) {
      words.insert(words.end(), command.begin(), command.end());
    }
  }
  std::optional<ShellWord> nodes;
  for (size_t j = 0; j < launcher.size(); ++j) {
    const ShellWord& l = launcher[j];
    if (l.text.rfind("--nnodes=", 0) == 0) {
      nodes = l;
      nodes->text = l.text.substr(9);
    } else if (l.text == "--nnodes" && j + 1 < launcher.size()) {
      nodes = launcher[j + 1];
    } else if (l.bare) {
      // An unquoted variable may hold several launcher arguments, --nnodes among them,
      // unless it is the value of the option before it.
      const std::string& before = j > 0 ? launcher[j - 1].text : "";
      const bool value = before.rfind("-", 0) == 0 && before.find('=') == std::string::npos &&
                         before != "--standalone" && before != "--no-python" &&
                         before != "--no_python" && before != "-m" && before != "--module";
      if (!value) unknown_value(l, l.unresolved, "which may hold torchrun's --nnodes");
    }
  }
  if (nodes && !nodes->unresolved.empty()) {
    unknown_value(*nodes, "torchrun --nnodes", "the value of torchrun --nnodes");
  }

  std::map<std::string, std::string> model, plan;  // key -> YAML value
  std::map<std::string, std::string> given;        // every modelled argument -> its value
  std::vector<std::string> refused, unknown;
  std::map<std::string, ShellWord> written;  // each argument's (last) word
  MegatronScenario out;
  for (size_t i = 0; i < words.size(); ++i) {
    std::string name = words[i].text, value;
    const ShellWord& word = words[i];
    std::optional<ShellWord> value_word;
    bool inline_value = false;
    if (word.bare) {
      unknown_value(word, word.unresolved, "which may hold arguments");
      continue;
    }
    if (name.rfind("--", 0) != 0) {
      written.emplace(name, word);
      unknown.push_back("`" + excerpt(name, 60) + "` (expected --option)");
      continue;
    }
    const size_t eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
      value_word = word;
    }
    std::replace(name.begin(), name.end(), '_', '-');
    written[name] = word;
    const auto takes_value = [&] {
      if (!inline_value && i + 1 < words.size() && words[i + 1].text.rfind("--", 0) != 0) {
        value_word = words[i + 1];
        value = words[++i].text;
      }
    };
    // An nargs='+' argument's value: every word up to the next option, space-separated.
    const auto all_values = [&] {
      std::string all = inline_value ? value : "";
      while (i + 1 < words.size() && words[i + 1].text.rfind("--", 0) != 0) {
        if (!value_word || !words[i + 1].unresolved.empty()) value_word = words[i + 1];
        all += (all.empty() ? "" : " ") + words[++i].text;
      }
      return all;
    };
    if (name == "--cuda-graph-warmup-steps") {
      out.ignored.push_back(name + " " + all_values() + " (warm-up steps before capture)");
      continue;
    }
    if (name == "--recompute-modules" || name == "--offload-modules" ||
        name == "--cuda-graph-scope" || name == "--cuda-graph-modules") {
      given[name] = all_values();
      if (value_word && !value_word->unresolved.empty()) {
        unknown_value(*value_word, name, "the value of " + name);
      }
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
      throw ConfigError(at(word, name), name + " needs a value");
    }
    if (value_word && !value_word->unresolved.empty() && arg.use != Use::kIgnored) {
      unknown_value(*value_word, name, "the value of " + name);
      continue;
    }
    switch (arg.use) {
      case Use::kModel:
        model[arg.target] = arg.flag ? "true" : value;
        out.origins["model." + std::string(arg.target)] = at(word, name);
        break;
      case Use::kPlan:
        plan[arg.target] = arg.flag ? "true" : value;
        out.origins["plan." + std::string(arg.target)] = at(word, name);
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
  translate_special_args(given, &model, &plan, &out.ignored, &refused);
  if (has("--num-virtual-stages-per-pipeline-rank")) {
    plan["virtual_stages"] = get("--num-virtual-stages-per-pipeline-rank");
  } else if (has("--num-layers-per-virtual-pipeline-stage") && model.count("num_layers")) {
    const long layers = std::atol(model["num_layers"].c_str());
    const long per = std::atol(get("--num-layers-per-virtual-pipeline-stage").c_str());
    const long p =
        plan.count("pipeline_parallel") ? std::atol(plan["pipeline_parallel"].c_str()) : 1;
    if (per < 1 || p < 1 || layers % (per * p) != 0) {
      throw ConfigError(at(written.at("--num-layers-per-virtual-pipeline-stage"),
                           "--num-layers-per-virtual-pipeline-stage"),
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

  // Where the special arguments' settings come from.
  const auto origin = [&](const std::string& key, std::initializer_list<const char*> options) {
    if (!find_path_key(key, model, plan)) return;
    for (const char* o : options) {
      if (const auto it = written.find(o); it != written.end()) {
        out.origins[key] = at(it->second, o);
        return;
      }
    }
  };
  origin("plan.cp_comm_type", {"--cp-comm-type"});
  origin("plan.moe_token_dispatcher_type", {"--moe-token-dispatcher-type"});
  origin("model.moe_layer_freq", {"--moe-layer-freq"});
  origin("plan.attention_backend", {"--attention-backend", "--use-flash-attn"});
  origin("model.position_embedding",
         {"--position-embedding-type", "--use-rotary-position-embeddings"});
  origin("model.num_query_groups", {"--num-query-groups"});
  origin("plan.precision", {"--fp4-format", "--fp8-format", "--fp16", "--bf16"});
  origin("plan.virtual_stages",
         {"--num-virtual-stages-per-pipeline-rank", "--num-layers-per-virtual-pipeline-stage"});
  origin("plan.schedule",
         {"--num-virtual-stages-per-pipeline-rank", "--num-layers-per-virtual-pipeline-stage",
          "--pipeline-model-parallel-layout"});
  origin("model.vocab_size", {"--padded-vocab-size", "--vocab-size"});
  if (nodes) out.origins["cluster.nodes"] = at(*nodes, "torchrun --nnodes");

  // Each refused or unknown argument with its line; the first one locates the error.
  const auto locate = [&](std::vector<std::string>* entries) {
    for (std::string& e : *entries) {
      std::string name = e.substr(0, e.find(' '));
      name.erase(std::remove(name.begin(), name.end(), '`'), name.end());
      const auto it = written.find(name);
      if (it == written.end()) continue;
      if (where.line == 0) where = at(it->second, name);
      const std::string line = "line " + std::to_string(it->second.line);
      const size_t paren = e.find(" (");
      e = paren == std::string::npos ? e + " (" + line + ")"
                                     : e.substr(0, paren + 2) + line + "; " + e.substr(paren + 2);
    }
  };
  locate(&refused);
  locate(&unknown);
  std::string problems;
  if (!unresolved.empty()) {
    problems +=
        "no value (set neither in the launch file before its use nor in the "
        "environment) for ";
    for (size_t i = 0; i < unresolved.size(); ++i) problems += (i ? "; " : "") + unresolved[i];
  }
  if (!refused.empty()) {
    problems += std::string(problems.empty() ? "" : "; ");
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
  if (nodes) {
    y += "overrides:\n  cluster.nodes: " + yaml_scalar(nodes->text) + "  # torchrun --nnodes\n";
  }
  y += "model:\n  name: megatron-model\n";
  for (const auto& [k, v] : model) y += "  " + k + ": " + yaml_scalar(v) + "\n";
  y += "plan:\n";
  for (const auto& [k, v] : plan) y += "  " + k + ": " + yaml_scalar(v) + "\n";
  out.yaml = y;
  return out;
}

}  // namespace trident
