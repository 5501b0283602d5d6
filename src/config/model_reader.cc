// Conversion of the `model:` section (DESIGN.md "Model"; Megatron-LM field names).
#include "config/section_readers.h"

namespace trident {

ModelSpec read_model(const MapReader& map) {
  map.check_keys();
  ModelSpec m;
  m.name = map.req_string("name");
  m.num_layers = static_cast<int>(map.req_int("num_layers", 1, limits::kMaxLayers));
  m.hidden_size = static_cast<int>(map.req_int("hidden_size", 1, limits::kMaxHiddenSize));
  m.num_attention_heads =
      static_cast<int>(map.req_int("num_attention_heads", 1, limits::kMaxHeads));
  m.num_query_groups = static_cast<int>(
      map.opt_int("num_query_groups", 1, limits::kMaxHeads).value_or(m.num_attention_heads));
  m.swiglu = map.opt_bool("swiglu").value_or(false);
  if (auto ffn = map.opt_int("ffn_hidden_size", 1, limits::kMaxFfnHiddenSize)) {
    m.ffn_hidden_size = *ffn;
  } else if (m.swiglu) {
    map.fail("swiglu",
             "a SwiGLU model needs ffn_hidden_size (expected the gated MLP width, e.g. 28672 "
             "for Llama-3-70B; there is no default)");
  } else {
    m.ffn_hidden_size = 4 * static_cast<std::int64_t>(m.hidden_size);
  }
  m.seq_length = static_cast<int>(map.req_int("seq_length", 1, limits::kMaxSeqLength));
  m.vocab_size = map.req_int("vocab_size", 1, limits::kMaxVocabSize);
  m.learned_position_embeddings =
      map.opt_choice("position_embedding", {"learned", "rope"}).value_or("learned") == "learned";
  for (const SpecIssue& issue : model_issues(m)) {
    throw ConfigError(locate_issue(map, issue), issue.message);
  }
  return m;
}

}  // namespace trident
