#include "config/pipeline_layout.h"

#include <cctype>
#include <cstdint>

#include "config/limits.h"

namespace trident {
namespace {

// Expands "(...)*N" and "x*N" (innermost groups first, as the parser's regular expressions
// do) and drops cosmetic commas and spaces. Returns false with *why on a malformed repeat or
// an expansion past the layer limit.
bool expand(const std::string& in, std::string* out, std::string* why) {
  std::string s;
  for (char c : in) {
    if (c != ',' && !std::isspace(static_cast<unsigned char>(c))) s += c;
  }
  const auto count_at = [&](size_t at, size_t* end, std::int64_t* n) {
    *n = 0;
    size_t i = at;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      *n = *n * 10 + (s[i] - '0');
      if (*n > limits::kMaxLayers * 4) return false;
      ++i;
    }
    *end = i;
    return i > at;
  };
  // Megatron's parser expands one level of groups (its pattern's body excludes ')').
  int depth = 0;
  for (char c : s) {
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (depth > 1) {
      *why =
          "nests groups, which Megatron-LM's parser does not expand (expected (...)*N "
          "without groups inside)";
      return false;
    }
  }
  // Groups: repeatedly replace the first "(body)*N".
  for (;;) {
    const size_t close = s.find(')');
    if (close == std::string::npos) break;
    const size_t open = s.rfind('(', close);
    if (open == std::string::npos) {
      *why = "has ')' without '('";
      return false;
    }
    size_t end = 0;
    std::int64_t n = 0;
    if (close + 1 >= s.size() || s[close + 1] != '*' || !count_at(close + 2, &end, &n)) {
      *why = "has a group \"(" + s.substr(open + 1, close - open - 1) +
             ")\" without a repeat count (expected (...)*N)";
      return false;
    }
    const std::string body = s.substr(open + 1, close - open - 1);
    if (body.size() * static_cast<size_t>(n) > static_cast<size_t>(limits::kMaxLayers) * 8) {
      *why = "expands past " + std::to_string(limits::kMaxLayers * 8) + " characters";
      return false;
    }
    std::string rep;
    for (std::int64_t i = 0; i < n; ++i) rep += body;
    s = s.substr(0, open) + rep + s.substr(end);
  }
  if (s.find('(') != std::string::npos) {
    *why = "has '(' without ')'";
    return false;
  }
  // Single characters: "x*N".
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '*') {
      r += s[i];
      continue;
    }
    size_t end = 0;
    std::int64_t n = 0;
    if (r.empty() || !count_at(i + 1, &end, &n)) {
      *why = "has a '*' that does not follow a layer with a count (expected e.g. t*3)";
      return false;
    }
    const char c = r.back();
    r.pop_back();
    if (r.size() + static_cast<size_t>(n) > static_cast<size_t>(limits::kMaxLayers) * 8) {
      *why = "expands past " + std::to_string(limits::kMaxLayers * 8) + " characters";
      return false;
    }
    r.append(static_cast<size_t>(n), c);
    i = end - 1;
  }
  *out = r;
  return true;
}

}  // namespace

std::optional<PipelineLayout> parse_pipeline_layout(const std::string& text, int pipeline,
                                                    std::string* why) {
  std::string s;
  if (!expand(text, &s, why)) return std::nullopt;
  std::vector<int> layers(1, 0);
  int embeddings = 0, losses = 0;
  PipelineLayout out;
  bool embedding_first = false, loss_last = false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '|') {
      layers.push_back(0);
    } else if (c == 't') {
      if (out.mtp_layers > 0) {
        *why =
            "places a decoder layer 't' after a multi-token-prediction layer 'm' (expected "
            "every 't' before the first 'm', as Megatron-LM requires)";
        return std::nullopt;
      }
      ++layers.back();
    } else if (c == 'E') {
      ++embeddings;
      embedding_first = i == 0;
    } else if (c == 'L') {
      ++losses;
      loss_last = i + 1 == s.size();
    } else if (c == 'm') {
      const int stage = static_cast<int>(layers.size()) - 1;
      if (out.mtp_layers > 0 && out.mtp_stage != stage) {
        *why =
            "places multi-token-prediction layers 'm' in more than one virtual stage "
            "(expected all of them in one, as Megatron-LM requires)";
        return std::nullopt;
      }
      out.mtp_stage = stage;
      ++out.mtp_layers;
    } else {
      *why = std::string("has '") + c + "' (expected E, t, L, |, (...)*N, x*N)";
      return std::nullopt;
    }
  }
  if (embeddings != 1 || !embedding_first) {
    *why = "must open with the embedding 'E', exactly once";
    return std::nullopt;
  }
  if (losses != 1 || !loss_last) {
    *why = "must close with the loss 'L', exactly once";
    return std::nullopt;
  }
  const int stages = static_cast<int>(layers.size());
  if (pipeline < 1 || stages % pipeline != 0) {
    *why = "has " + std::to_string(stages) + " stages, not a multiple of pipeline_parallel " +
           std::to_string(pipeline) + " (expected pipeline_parallel × virtual stages)";
    return std::nullopt;
  }
  out.virtual_stages = stages / pipeline;
  if (out.mtp_layers > 0 && out.mtp_stage / pipeline != out.virtual_stages - 1) {
    *why = "places multi-token-prediction layers 'm' in virtual stage " +
           std::to_string(out.mtp_stage) + ", chunk " + std::to_string(out.mtp_stage / pipeline) +
           " of pipeline rank " + std::to_string(out.mtp_stage % pipeline) +
           " (expected the last chunk of a rank, as Megatron-LM requires)";
    return std::nullopt;
  }
  out.decoder_layers = std::move(layers);
  return out;
}

std::optional<std::vector<int>> accounted_split(int layers, int p, int v, bool embedding, bool loss,
                                                std::string* why) {
  const int stages = p * v;
  const int slots = layers + (embedding ? 1 : 0) + (loss ? 1 : 0);
  if (stages < 1 || slots % stages != 0) {
    *why = "num_layers " + std::to_string(layers) + (embedding ? " + 1 (embedding)" : "") +
           (loss ? " + 1 (loss)" : "") + " = " + std::to_string(slots) +
           " is not divisible by pipeline_parallel × virtual_stages = " + std::to_string(stages);
    return std::nullopt;
  }
  std::vector<int> out(stages, slots / stages);
  if (embedding) --out.front();
  if (loss) --out.back();
  if (out.front() < 0 || out.back() < 0) {
    *why = "one layer per virtual stage leaves none for the embedding or the loss";
    return std::nullopt;
  }
  return out;
}

}  // namespace trident
