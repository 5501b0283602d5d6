// Uneven pipeline splits: Megatron-LM's decoder_first/last_pipeline_num_layers resolved into
// layers per virtual stage, and the split to propose when a model's layers do not divide.
// Virtual stage chunk * p + stage is chunk `chunk` of pipeline stage `stage` (PlanSpec).
#ifndef TRIDENT_CONFIG_PIPELINE_SPLIT_H_
#define TRIDENT_CONFIG_PIPELINE_SPLIT_H_

#include <optional>
#include <string>
#include <vector>

namespace trident {

// Returns the layers of each of the p * v virtual stages when the first pipeline stage holds
// `first` layers and the last `last` (nullopt: not given; at least one is given), the other
// layers spread evenly over the middle stages, and each stage's layers evenly over its v
// chunks, as Megatron-LM does. Returns nullopt and sets *why (a phrase with the numbers and
// what would work) when that is impossible: p < 2, a count not divisible by v, or middle
// layers that do not divide among the middle stages.
std::optional<std::vector<int>> first_last_split(int layers, int p, int v, std::optional<int> first,
                                                 std::optional<int> last, std::string* why);

// Returns a split of `layers` over p * v virtual stages, each within one layer of the others,
// with the lighter ones at both ends of the model (which also hold the embedding and the
// output layer). Requires layers >= p * v.
std::vector<int> balanced_split(int layers, int p, int v);

// Returns "pipeline_layers: [5, 6, ..., 5]" (run lengths past 64 entries), followed by
// " or decoder_first_pipeline_num_layers: F, decoder_last_pipeline_num_layers: F" when a
// symmetric first/last split exists. Requires layers >= p * v.
std::string propose_split(int layers, int p, int v);

}  // namespace trident

#endif  // TRIDENT_CONFIG_PIPELINE_SPLIT_H_
