// Local attention: the sliding window (Megatron-Core window_size, gpt-oss) and chunked
// attention (Llama 4) as the query-key pairs their masks keep (docs/attention.md). The fused
// kernels (FlashAttention's window_size, cuDNN's sliding window through Transformer Engine)
// skip every key tile outside the band, so a layer's work is its kept pairs, not s^2 / 2.
#ifndef TRIDENT_WORKLOAD_LOCAL_ATTENTION_H_
#define TRIDENT_WORKLOAD_LOCAL_ATTENTION_H_

#include "config/model.h"
#include "workload/layer_ops.h"

namespace trident {

// Returns the query-key pairs a causal mask with a window of `window` keys (0: none) and
// chunks of `chunk` tokens (0: none) keeps for queries first .. first + n - 1 (0-based
// positions in the sequence): sum over those queries i of min(i + 1, window), or of
// (i mod chunk) + 1. Requires n >= 0, first >= 0, not both window and chunk.
double local_pairs(double first, double n, double window, double chunk);

// Sets d->window and d->chunk to layer `layer`'s sliding window or chunk (ModelSpec
// layer_window, layer_chunk) when it is shorter than the sequence (a window or chunk of at
// least seq_length keys is the plain causal attention and leaves the layer as it is), and
// d->rope off on the model's no-RoPE layers.
void apply_layer_attention(const ModelSpec& model, int layer, LayerDims* d);

// Returns the pairs one rank's causal queries keep per batch and head under d.window or
// d.chunk, over the whole sequence (d.cp * d.s tokens) split as `part` says: kWhole, the
// rank holds the whole sequence (cp 1, or a2a); kWorstCpRank, the busiest rank of the
// load-balanced layout (chunks r and 2cp-1-r of s/2 tokens each; all_gather). 0 when the
// layer is not local.
enum class LocalPart { kWhole, kWorstCpRank };
double layer_local_pairs(const LayerDims& d, LocalPart part);

}  // namespace trident

#endif  // TRIDENT_WORKLOAD_LOCAL_ATTENTION_H_
