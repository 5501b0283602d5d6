// Runs a function in a forked child process and returns what it printed into its result.
// SimGrid allows one simulation per process, so tests and sweeps run each one this way.
#ifndef TRIDENT_CORE_ISOLATED_RUN_H_
#define TRIDENT_CORE_ISOLATED_RUN_H_

#include <functional>
#include <string>

namespace trident {

// Forks; the child runs `fn` and sends its returned string back through a pipe.
// Returns that string. Throws std::runtime_error with the child's exception message (prefixed
// by its type: "ConfigError: ...") if `fn` threw, or a description if the child crashed.
std::string run_isolated(const std::function<std::string()>& fn);

}  // namespace trident

#endif  // TRIDENT_CORE_ISOLATED_RUN_H_
