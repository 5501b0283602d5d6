#include "config/hf_import.h"

#include <filesystem>
#include <functional>
#include <vector>

#include "config/hf_attention_import.h"
#include "config/hf_moe_import.h"

namespace trident {
namespace {

// Returns the entry of the first of `names` present with a value, or nullptr.
const YamlEntry* find_any(const YamlNode& config, const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    const YamlEntry* e = config.find(n);
    if (e != nullptr && !e->value->is_null()) return e;
  }
  return nullptr;
}

YamlNodePtr plain_scalar(const std::string& text, const YamlMark& mark) {
  auto node = std::make_shared<YamlNode>();
  node->kind = YamlNode::Kind::kScalar;
  node->scalar = text;
  node->mark = mark;
  return node;
}

bool one_of(const std::string& s, const std::vector<std::string>& names) {
  for (const std::string& n : names) {
    if (s == n) return true;
  }
  return false;
}

// Hugging Face model types whose layers are the decoder-only transformer trident models:
// attention (multi-head, grouped-query or multi-latent) and a dense or mixture-of-experts
// MLP, each behind a norm. A "_text" type is a multimodal model's language part.
const std::vector<std::string>& supported_model_types() {
  static const std::vector<std::string> types = {
      "baichuan",  "bloom",     "cohere",   "deepseek_v2", "deepseek_v3", "falcon",  "gemma",
      "gemma2",    "gpt2",      "gpt_oss",  "gpt_bigcode", "gpt_neox",    "gptj",    "granite",
      "internlm2", "llama",     "llama4",   "llama4_text", "mistral",     "mixtral", "mpt",
      "olmo",      "olmo2",     "opt",      "phi",         "phi3",        "qwen2",   "qwen2_moe",
      "qwen3",     "qwen3_moe", "stablelm", "starcoder2"};
  return types;
}

// Refuses a model_type outside supported_model_types(): an encoder, an encoder-decoder, a
// state-space or hybrid model imported by its sizes alone would be simulated as a decoder.
void check_model_type(
    const YamlEntry& type,
    const std::function<void(const YamlMark&, const std::string&, const std::string&)>& fail) {
  const YamlNode& v = *type.value;
  if (v.is_null()) return;
  if (v.is_scalar() && one_of(v.scalar, supported_model_types())) return;
  std::string known;
  for (const std::string& t : supported_model_types()) known += (known.empty() ? "" : ", ") + t;
  fail(v.mark, type.key,
       "model_type " + (v.is_scalar() ? "`" + excerpt(v.scalar) + "`" : v.describe()) +
           " is not a decoder-only transformer trident models (expected one of: " + known +
           "; for another architecture of the same layers, remove model_type)");
}

}  // namespace

bool is_hf_reference(const std::string& reference) {
  const std::string json = ".json";
  return reference.rfind("hf:", 0) == 0 ||
         (reference.size() > json.size() &&
          reference.compare(reference.size() - json.size(), json.size(), json) == 0);
}

std::string hf_reference_path(const std::string& reference) {
  return reference.rfind("hf:", 0) == 0 ? reference.substr(3) : reference;
}

std::string hf_model_name(const std::string& path) {
  const std::filesystem::path p(path);
  if (p.filename() == "config.json" && p.has_parent_path() && !p.parent_path().filename().empty() &&
      p.parent_path().filename() != "." && p.parent_path().filename() != "..") {
    return p.parent_path().filename().string();
  }
  return p.stem().string();
}

YamlNodePtr model_map_from_hf(const YamlNode& file, const std::string& name, Diagnostics* diag) {
  // Multimodal configs (Llama 4) hold the language model under text_config.
  const YamlEntry* text = file.find("text_config");
  const YamlNode& config =
      text != nullptr && text->value->is_map() && !file.find("num_hidden_layers") ? *text->value
                                                                                  : file;
  auto model = std::make_shared<YamlNode>();
  model->kind = YamlNode::Kind::kMap;
  model->mark = config.mark;
  model->set("name", config.mark, plain_scalar(name, config.mark));
  const auto fail = [&](const YamlMark& mark, const std::string& key, const std::string& what) {
    report(diag, ConfigError(location_of(mark, "model." + key), what));
  };

  struct Field {
    const char* key;                 // Megatron name
    std::vector<std::string> names;  // config.json names, preferred first
    bool required;
  };
  const Field fields[] = {
      {"num_layers", {"num_hidden_layers", "n_layer"}, true},
      {"hidden_size", {"hidden_size", "n_embd"}, true},
      {"num_attention_heads", {"num_attention_heads", "n_head"}, true},
      {"num_query_groups", {"num_key_value_heads"}, false},
      {"ffn_hidden_size", {"intermediate_size", "n_inner"}, false},
      {"vocab_size", {"vocab_size"}, true},
      // Not max_position_embeddings (or n_positions): that is the context window the model
      // supports, not the length it trains at (131072 for Llama 3.1, trained mostly at 8192).
      {"seq_length", {"seq_length"}, false},
  };
  for (const Field& f : fields) {
    const YamlEntry* e = find_any(config, f.names);
    if (e == nullptr) {
      const YamlEntry* empty = nullptr;
      for (const std::string& n : f.names) {
        if (empty == nullptr) empty = config.find(n);
      }
      if (empty != nullptr) {
        // `null`: passed on as written, so the model reader says "no value given" there (an
        // optional field falls back to its default).
        model->set(f.key, empty->key_mark, empty->value);
        model->find(f.key)->written_as = empty->key;
      } else if (f.required) {
        fail(config.mark, f.names.front(),
             "missing required key in a Hugging Face config.json (expected \"" + f.names.front() +
                 "\": an integer)");
      }
      continue;
    }
    model->set(f.key, e->key_mark, e->value);
    model->find(f.key)->written_as = e->key;
  }

  // The MLP: silu (SwiGLU) in Llama-style models; gelu or relu in GPT-style ones.
  if (const YamlEntry* act =
          find_any(config, {"hidden_act", "activation_function", "hidden_activation"})) {
    const std::vector<std::string> gated = {"silu", "swish", "swiglu"};
    const std::vector<std::string> plain = {
        "gelu", "gelu_new", "gelu_fast", "gelu_pytorch_tanh", "quick_gelu", "relu"};
    const YamlNode& v = *act->value;
    if (v.is_scalar() && (one_of(v.scalar, gated) || one_of(v.scalar, plain))) {
      model->set("swiglu", act->key_mark,
                 plain_scalar(one_of(v.scalar, gated) ? "true" : "false", v.mark));
      model->find("swiglu")->written_as = act->key;
    } else {
      fail(v.mark, act->key,
           "unknown activation " + v.describe() +
               " (expected one of: silu, swish, swiglu (gated MLP); gelu, gelu_new, gelu_fast, "
               "gelu_pytorch_tanh, quick_gelu, relu)");
    }
  }

  if (const YamlEntry* tie = find_any(config, {"tie_word_embeddings"})) {
    const YamlNode& v = *tie->value;
    if (v.is_scalar() && !v.quoted && (v.scalar == "true" || v.scalar == "false")) {
      model->set("untie_embeddings_and_output_weights", tie->key_mark,
                 plain_scalar(v.scalar == "true" ? "false" : "true", v.mark));
      model->find("untie_embeddings_and_output_weights")->written_as = tie->key;
    } else {
      fail(v.mark, tie->key, "expected true or false, got " + v.describe());
    }
  }

  // Dropout and normalization. Llama-style (gated) configs that name no dropout train without
  // it (their Hugging Face modules have no residual dropout).
  const YamlEntry* gated = model->find("swiglu");
  const bool llama_style = gated != nullptr && gated->value->scalar == "true";
  const auto dropout = [&](const char* key, const std::vector<std::string>& names) {
    if (const YamlEntry* e = find_any(config, names)) {
      model->set(key, e->key_mark, e->value);
      model->find(key)->written_as = e->key;
    } else if (llama_style) {
      model->set(key, config.mark, plain_scalar("0", config.mark));
    }
  };
  dropout("attention_dropout", {"attention_dropout", "attn_pdrop", "attention_probs_dropout_prob"});
  dropout("hidden_dropout", {"hidden_dropout", "resid_pdrop", "hidden_dropout_prob"});
  if (const YamlEntry* eps =
          find_any(config, {"rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon"})) {
    model->set("normalization", eps->key_mark,
               plain_scalar(eps->key == "rms_norm_eps" ? "RMSNorm" : "LayerNorm", eps->key_mark));
    model->find("normalization")->written_as = eps->key;
  }

  std::string position = "learned";
  const YamlEntry* type = config.find("model_type");
  const std::string model_type =
      type != nullptr && type->value->is_scalar() ? type->value->scalar : "";
  if (type != nullptr) check_model_type(*type, fail);
  if (find_any(config, {"rope_theta", "rope_scaling", "rotary_dim", "rotary_pct"}) != nullptr ||
      one_of(model_type, {"llama", "mistral", "mixtral", "qwen2", "gemma", "gemma2", "phi3",
                          "gpt_neox", "gptj", "falcon", "olmo"})) {
    position = "rope";
  } else if (one_of(model_type, {"bloom", "mpt"})) {
    position = "alibi";
  }
  model->set("position_embedding", config.mark, plain_scalar(position, config.mark));
  add_hf_moe_fields(config, model.get(), fail);
  add_hf_attention_fields(config, model.get(), fail);
  return model;
}

}  // namespace trident
