// A Megatron-LM launch line (`torchrun ... pretrain_gpt.py --num-layers 80 ...`, or just its
// arguments) translated into a trident scenario: model, plan, precision and every option
// trident models. Pure: the result is YAML text that goes through the normal loader.
#ifndef TRIDENT_CONFIG_MEGATRON_ARGS_H_
#define TRIDENT_CONFIG_MEGATRON_ARGS_H_

#include <map>
#include <string>
#include <vector>

#include "config/shell_words.h"
#include "core/errors.h"

namespace trident {

struct MegatronScenario {
  std::string yaml;                  // a scenario file's text
  std::vector<std::string> ignored;  // arguments that do not change the step, with why
  // For each setting of `yaml` an argument gave ("plan.tensor_parallel", "cluster.nodes"):
  // that argument's file, line, column and name.
  std::map<std::string, SourceLocation> origins;
};

// Translates the launch script `text` (shell syntax, config/shell_words.h: quotes,
// backslash-newlines, # comments, several commands, variables set in the script or taken
// from `env`). The command running a `*.py` script is the launch line: the words before the
// script are the launcher, whose --nnodes sets cluster.nodes, the words after it Megatron's
// arguments; a text without a script is all arguments. `label` names the text in messages
// (the file, or "<stdin>"); `cluster` is the scenario's `cluster:` value (a library name or
// path, written as given). Throws ConfigError (file: label, at the first problem's line,
// column and name) naming every variable that has no value where it could hold arguments or
// gives a modelled one, every argument that changes the step but is not modelled and every
// unknown argument, each with its line, and required ones that are missing (--num-layers,
// --hidden-size, --num-attention-heads, --seq-length, --micro-batch-size, a vocabulary).
MegatronScenario translate_megatron_args(const std::string& text, const std::string& label,
                                         const std::string& cluster,
                                         const ShellEnvironment& env = process_environment());

}  // namespace trident

#endif  // TRIDENT_CONFIG_MEGATRON_ARGS_H_
