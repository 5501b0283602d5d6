// The table of searched plan fields that search_dimensions() (plan_space.h) returns, built
// once. Pure (no SimGrid).
#ifndef TRIDENT_SEARCH_PLAN_DIMENSIONS_H_
#define TRIDENT_SEARCH_PLAN_DIMENSIONS_H_

#include <string>
#include <vector>

#include "search/plan_space.h"

namespace trident {

// Returns the table's entries, in enumeration order (docs/plan.md, "The space").
std::vector<SearchDimension> build_dimensions();

// Parses "true" / "false" as the table's boolean fields do; false for anything else.
bool parse_search_bool(const std::string& text, bool* out);

}  // namespace trident

#endif  // TRIDENT_SEARCH_PLAN_DIMENSIONS_H_
