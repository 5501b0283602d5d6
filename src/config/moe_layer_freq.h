// Megatron-LM's --moe-layer-freq argument (megatron/training/arguments.py, moe_freq_type): an
// integer N (every N-th layer is MoE), or a Python list expression of 0/1 items and [x]*n
// repetitions joined by +, such as "([0]*3+[1]*58)" or "[1,0,1,0]".
#ifndef TRIDENT_CONFIG_MOE_LAYER_FREQ_H_
#define TRIDENT_CONFIG_MOE_LAYER_FREQ_H_

#include <string>

namespace trident {

// Writes `text` as the value of trident's model.moe_layer_freq to *out: the integer, or the
// expanded list in YAML flow form ("[0, 0, 0, 1, ...]"). Returns false, leaving *out, for
// anything else (another expression, items other than 0 and 1, more than 100000 repeats).
bool parse_moe_layer_freq(const std::string& text, std::string* out);

}  // namespace trident

#endif  // TRIDENT_CONFIG_MOE_LAYER_FREQ_H_
