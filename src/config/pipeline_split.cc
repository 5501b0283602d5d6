#include "config/pipeline_split.h"

#include <cstdint>
#include <utility>

namespace trident {
namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

// "[5, 6, 6, 5]"; past 64 entries "a list of 96 entries: 2 (x 28), 3 (x 40), 2 (x 28)".
std::string list_text(const std::vector<int>& values) {
  std::string out;
  if (values.size() <= 64) {
    for (int v : values) out += (out.empty() ? "[" : ", ") + str(v);
    return out + "]";
  }
  out = "a list of " + str(static_cast<std::int64_t>(values.size())) + " entries: ";
  for (size_t i = 0; i < values.size();) {
    size_t j = i;
    while (j < values.size() && values[j] == values[i]) ++j;
    out += (i == 0 ? "" : ", ") + str(values[i]) + " (x " + str(static_cast<std::int64_t>(j - i)) +
           ")";
    i = j;
  }
  return out;
}

}  // namespace

std::optional<std::vector<int>> first_last_split(int layers, int p, int v, std::optional<int> first,
                                                 std::optional<int> last, std::string* why) {
  if (p < 2) {
    *why = "needs pipeline_parallel >= 2 (it is " + str(p) + ")";
    return std::nullopt;
  }
  if (std::int64_t{p} * v > layers) {
    *why = "pipeline_parallel × virtual_stages = " + str(std::int64_t{p} * v) +
           " exceeds model.num_layers " + str(layers) + " (each virtual stage needs a layer)";
    return std::nullopt;
  }
  for (const auto& [value, name] : {std::pair{first, "decoder_first_pipeline_num_layers"},
                                    std::pair{last, "decoder_last_pipeline_num_layers"}}) {
    if (value && *value % v != 0) {
      *why = std::string(name) + " " + str(*value) + " is not divisible by virtual_stages " +
             str(v) + " (each of a stage's chunks holds the same number of layers)";
      return std::nullopt;
    }
  }
  const std::int64_t ends = std::int64_t{first.value_or(0)} + last.value_or(0);
  const int middle_stages = p - (first ? 1 : 0) - (last ? 1 : 0);
  const std::int64_t middle_layers = layers - ends;
  const std::string given = first && last ? "decoder_first_pipeline_num_layers + "
                                            "decoder_last_pipeline_num_layers = " +
                                                str(ends)
                            : first ? "decoder_first_pipeline_num_layers " + str(ends)
                                    : "decoder_last_pipeline_num_layers " + str(ends);
  if (middle_stages == 0) {
    if (middle_layers != 0) {
      *why = given + " must equal model.num_layers " + str(layers) + " when pipeline_parallel is 2";
      return std::nullopt;
    }
  } else {
    const std::int64_t per = std::int64_t{middle_stages} * v;
    if (middle_layers < per || middle_layers % per != 0) {
      *why = "leaves " + str(middle_layers) + " of model.num_layers " + str(layers) + " (after " +
             given + ") for " + str(middle_stages) + " middle stages" +
             (v > 1 ? " of " + str(v) + " chunks" : "") + ", which is not a positive multiple of " +
             str(per);
      return std::nullopt;
    }
  }
  std::vector<int> out(static_cast<size_t>(p) * v);
  for (int s = 0; s < p; ++s) {
    std::int64_t stage_layers = middle_stages > 0 ? middle_layers / middle_stages : 0;
    if (s == 0 && first) stage_layers = *first;
    if (s == p - 1 && last) stage_layers = *last;
    for (int c = 0; c < v; ++c) out[static_cast<size_t>(c) * p + s] = int(stage_layers / v);
  }
  return out;
}

std::vector<int> balanced_split(int layers, int p, int v) {
  const std::int64_t n = std::int64_t{p} * v;
  const int q = static_cast<int>((layers + n - 1) / n);
  std::vector<int> out(static_cast<size_t>(n), q);
  std::int64_t excess = q * n - layers;
  // Take one layer from each end in turn, moving inwards.
  for (std::int64_t i = 0; excess > 0; ++i) {
    const std::int64_t at = i % 2 == 0 ? i / 2 : n - 1 - i / 2;
    out[static_cast<size_t>(at)] -= 1;
    --excess;
  }
  return out;
}

std::string propose_split(int layers, int p, int v) {
  std::string out = "pipeline_layers: " + list_text(balanced_split(layers, p, v));
  if (p < 2) return out;
  // A symmetric first/last split, the ends as close to the middle stages as possible.
  for (int f = layers / p / v * v; f >= v; f -= v) {
    std::string why;
    if (first_last_split(layers, p, v, f, f, &why)) {
      return out + " or decoder_first_pipeline_num_layers: " + str(f) +
             ", decoder_last_pipeline_num_layers: " + str(f);
    }
  }
  return out;
}

}  // namespace trident
