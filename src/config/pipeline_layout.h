// Megatron-Core's flexible pipeline layout (--pipeline-model-parallel-layout, e.g.
// "Et|(tt|)*30L") and its embedding/loss-aware even split (--account-for-embedding-in-
// pipeline-split, --account-for-loss-in-pipeline-split), resolved into decoder layers per
// virtual stage. Grammar and rules from megatron/core/transformer/
// pipeline_parallel_layer_layout.py; the split from get_transformer_layer_offset and
// get_num_layers_to_build (megatron/core/transformer/transformer_block.py).
#ifndef TRIDENT_CONFIG_PIPELINE_LAYOUT_H_
#define TRIDENT_CONFIG_PIPELINE_LAYOUT_H_

#include <optional>
#include <string>
#include <vector>

namespace trident {

// A parsed layout: one entry per virtual stage (virtual stage chunk * p + stage, the order of
// the string), each counting its decoder layers ('t'); the embedding ('E') opens the first
// and the loss ('L') closes the last. Multi-token-prediction layers ('m') sit in one virtual
// stage, `mtp_stage` (-1: none in the layout), `mtp_layers` of them.
struct PipelineLayout {
  std::vector<int> decoder_layers;
  int virtual_stages = 1;  // stages / pipeline_parallel
  int mtp_stage = -1;
  int mtp_layers = 0;
};

// Parses `text` for `pipeline` stages: '|' separates virtual stages, "(...)*N" and "x*N"
// repeat, commas and spaces are cosmetic; the characters are E, t, m, L. Returns nullopt and
// sets *why (a phrase naming what is wrong and what is expected) when the text does not parse,
// the stages do not divide by `pipeline`, E and L are not exactly once, first and last, or
// the 'm' break Megatron-Core's rules (PipelineParallelLayerLayout.validate_layer_layout in
// megatron/core/transformer/pipeline_parallel_layer_layout.py): every 't' before the first
// 'm', all 'm' in one virtual stage, and that stage the last chunk of its pipeline rank. That
// their number equals model.mtp_num_layers is checked where the model is known (plan_reader).
std::optional<PipelineLayout> parse_pipeline_layout(const std::string& text, int pipeline,
                                                    std::string* why);

// Returns the layers of each of the p * v virtual stages when the embedding (and/or the
// loss) counts as one layer of the even split, as Megatron-LM's account_for_*_in_pipeline_split
// do: (layers + embedding + loss) / (p v) slots per virtual stage, the first virtual stage
// giving one to the embedding and the last one to the loss. Returns nullopt and sets *why
// when the slots do not divide or a stage would be left with fewer than zero layers.
std::optional<std::vector<int>> accounted_split(int layers, int p, int v, bool embedding, bool loss,
                                                std::string* why);

}  // namespace trident

#endif  // TRIDENT_CONFIG_PIPELINE_LAYOUT_H_
