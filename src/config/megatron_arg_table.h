// The Megatron-LM arguments trident knows (config/megatron_args.h translates launch lines
// with it): for each, what it does to a trident scenario.
#ifndef TRIDENT_CONFIG_MEGATRON_ARG_TABLE_H_
#define TRIDENT_CONFIG_MEGATRON_ARG_TABLE_H_

#include <map>
#include <string>

namespace trident::megatron {

// What an argument does to a trident scenario.
enum class Use {
  kModel,    // a model setting (value, or `true` for a flag)
  kPlan,     // a plan setting
  kSpecial,  // handled after all are read (precision, virtual stages, vocabulary, ...)
  kIgnored,  // does not change one step's time or memory
  kRefused,  // changes the step; trident does not model it
};

struct Arg {
  Use use;
  bool flag;           // takes no value
  const char* target;  // the trident key (kModel/kPlan), or why (kIgnored/kRefused)
};

// Every argument trident translates, refuses or ignores by name ("--num-layers").
const std::map<std::string, Arg>& known_args();

// Whether `name` is one of the arguments that do not change one step by its prefix (logging,
// data, checkpoints, optimizer hyper-parameters, initialisation, numerics of the same cost);
// sets `why`.
bool is_ignored(const std::string& name, std::string* why);

}  // namespace trident::megatron

#endif  // TRIDENT_CONFIG_MEGATRON_ARG_TABLE_H_
