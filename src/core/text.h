// Small string helpers shared by every folder.
#ifndef TRIDENT_CORE_TEXT_H_
#define TRIDENT_CORE_TEXT_H_

#include <string>
#include <vector>

namespace trident {

// Returns `s` without leading and trailing white space (C locale: space, \t, \n, \v, \f, \r).
std::string trim(const std::string& s);

// Returns the parts of a dotted key path: "plan.tensor_parallel" -> {"plan",
// "tensor_parallel"}; "" -> {""}; empty parts are kept ("a..b" -> {"a", "", "b"}).
std::vector<std::string> split_key_path(const std::string& path);

}  // namespace trident

#endif  // TRIDENT_CORE_TEXT_H_
