// A Megatron-LM launch line (`torchrun ... pretrain_gpt.py --num-layers 80 ...`, or just its
// arguments) translated into a trident scenario: model, plan, precision and every option
// trident models. Pure: the result is YAML text that goes through the normal loader.
#ifndef TRIDENT_CONFIG_MEGATRON_ARGS_H_
#define TRIDENT_CONFIG_MEGATRON_ARGS_H_

#include <string>
#include <vector>

namespace trident {

struct MegatronScenario {
  std::string yaml;                  // a scenario file's text
  std::vector<std::string> ignored;  // arguments that do not change the step, with why
};

// Translates the launch line `text` (shell syntax: quotes, backslash-newlines, # comments;
// everything up to and including the `*.py` script is the launcher, whose --nnodes sets
// cluster.nodes). `label` names the text in messages (the file, or "-" for stdin);
// `cluster` is the scenario's `cluster:` value (a library name or path, written as given).
// Throws ConfigError (file: label, at the first refused argument's line and name) naming
// every argument that changes the step but is not modelled and every unknown argument, each
// with its line, and required ones that are missing (--num-layers,
// --hidden-size, --num-attention-heads, --seq-length, --micro-batch-size, a vocabulary).
MegatronScenario translate_megatron_args(const std::string& text, const std::string& label,
                                         const std::string& cluster);

}  // namespace trident

#endif  // TRIDENT_CONFIG_MEGATRON_ARGS_H_
