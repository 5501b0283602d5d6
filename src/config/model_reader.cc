// Conversion of the `model:` section (docs/schema.md, `model`; Megatron-LM field names).
#include "config/section_readers.h"

namespace trident {

ModelSpec read_model(const MapReader& map) {
  const std::size_t before = map.problems();
  map.check_keys();
  ModelSpec m;
  map.field([&] { m.name = *map.text("name"); });
  map.field([&] { m.num_layers = static_cast<int>(*map.integer("num_layers")); });
  map.field([&] { m.hidden_size = static_cast<int>(*map.integer("hidden_size")); });
  map.field([&] { m.num_attention_heads = static_cast<int>(*map.integer("num_attention_heads")); });
  map.field([&] {
    m.num_query_groups =
        static_cast<int>(map.integer("num_query_groups").value_or(m.num_attention_heads));
  });
  map.field([&] { m.swiglu = *map.flag("swiglu"); });
  map.field([&] {
    if (auto ffn = map.integer("ffn_hidden_size")) {
      m.ffn_hidden_size = *ffn;
    } else if (m.swiglu) {
      map.fail("swiglu",
               "a SwiGLU model needs ffn_hidden_size (expected the gated MLP width, e.g. 28672 "
               "for Llama-3-70B; there is no default)");
    } else {
      m.ffn_hidden_size = 4 * static_cast<std::int64_t>(m.hidden_size);
    }
  });
  map.field([&] { m.seq_length = static_cast<int>(*map.integer("seq_length")); });
  map.field([&] { m.vocab_size = *map.integer("vocab_size"); });
  map.field([&] {
    const std::string position = *map.text("position_embedding");
    m.learned_position_embeddings = position == "learned" || position == "learned_absolute";
    m.rotary_position_embeddings = position == "rope";
  });
  map.field([&] {
    m.untie_embeddings_and_output_weights = *map.flag("untie_embeddings_and_output_weights");
  });
  map.field([&] { m.attention_dropout = *map.number("attention_dropout"); });
  map.field([&] { m.hidden_dropout = *map.number("hidden_dropout"); });
  map.field([&] { m.rms_norm = *map.text("normalization") == "RMSNorm"; });
  if (map.problems() == before) report_issues(map, model_issues(m), false);
  return m;
}

}  // namespace trident
