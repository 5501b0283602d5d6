// Internal to config/megatron_args.cc: the Megatron-LM arguments whose value (or whose
// combination with others) decides whether and how trident models them, translated into model
// and plan settings.
#ifndef TRIDENT_CONFIG_MEGATRON_SPECIAL_ARGS_H_
#define TRIDENT_CONFIG_MEGATRON_SPECIAL_ARGS_H_

#include <map>
#include <string>
#include <vector>

namespace trident {

// Translates the special arguments among `given` (every modelled argument -> its value):
// context-parallel communication, token dispatchers, bias and grouped GEMM, layer patterns and
// windows, attention backend, position embedding, query groups, recomputation, CUDA graphs,
// FP8 delayed scaling, activation offloading and precision. Sets their model and plan settings
// (key -> YAML value), appends each argument that changes nothing, with why, to *ignored and
// each that is not modelled, with why, to *refused, in that order.
void translate_special_args(const std::map<std::string, std::string>& given,
                            std::map<std::string, std::string>* model_settings,
                            std::map<std::string, std::string>* plan_settings,
                            std::vector<std::string>* ignored, std::vector<std::string>* refused);

}  // namespace trident

#endif  // TRIDENT_CONFIG_MEGATRON_SPECIAL_ARGS_H_
