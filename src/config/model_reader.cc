// Conversion of the `model:` section (DESIGN.md "Model"; Megatron-LM field names).
#include "config/section_readers.h"

namespace trident {

ModelSpec read_model(const MapReader& map) {
  const std::size_t before = map.problems();
  map.check_keys();
  ModelSpec m;
  map.field([&] { m.name = map.req_string("name"); });
  map.field(
      [&] { m.num_layers = static_cast<int>(map.req_int("num_layers", 1, limits::kMaxLayers)); });
  map.field([&] {
    m.hidden_size = static_cast<int>(map.req_int("hidden_size", 1, limits::kMaxHiddenSize));
  });
  map.field([&] {
    m.num_attention_heads =
        static_cast<int>(map.req_int("num_attention_heads", 1, limits::kMaxHeads));
  });
  map.field([&] {
    m.num_query_groups = static_cast<int>(
        map.opt_int("num_query_groups", 1, limits::kMaxHeads).value_or(m.num_attention_heads));
  });
  map.field([&] { m.swiglu = map.opt_bool("swiglu").value_or(false); });
  map.field([&] {
    if (auto ffn = map.opt_int("ffn_hidden_size", 1, limits::kMaxFfnHiddenSize)) {
      m.ffn_hidden_size = *ffn;
    } else if (m.swiglu) {
      map.fail("swiglu",
               "a SwiGLU model needs ffn_hidden_size (expected the gated MLP width, e.g. 28672 "
               "for Llama-3-70B; there is no default)");
    } else {
      m.ffn_hidden_size = 4 * static_cast<std::int64_t>(m.hidden_size);
    }
  });
  map.field([&] {
    m.seq_length = static_cast<int>(map.req_int("seq_length", 1, limits::kMaxSeqLength));
  });
  map.field([&] { m.vocab_size = map.req_int("vocab_size", 1, limits::kMaxVocabSize); });
  map.field([&] {
    const std::string position =
        map.opt_choice("position_embedding", {"learned", "rope", "alibi"}).value_or("learned");
    m.learned_position_embeddings = position == "learned";
    m.rotary_position_embeddings = position == "rope";
  });
  map.field([&] {
    m.untie_embeddings_and_output_weights =
        map.opt_bool("untie_embeddings_and_output_weights").value_or(false);
  });
  map.field([&] {
    m.attention_dropout = map.opt_number("attention_dropout", 0, false, 1).value_or(0.1);
  });
  map.field(
      [&] { m.hidden_dropout = map.opt_number("hidden_dropout", 0, false, 1).value_or(0.1); });
  map.field([&] {
    m.rms_norm =
        map.opt_choice("normalization", {"LayerNorm", "RMSNorm"}).value_or("LayerNorm") ==
        "RMSNorm";
  });
  if (map.problems() == before) report_issues(map, model_issues(m), false);
  return m;
}

}  // namespace trident
