// "Did you mean" suggestions for misspelt keys and names.
#ifndef TRIDENT_CONFIG_DID_YOU_MEAN_H_
#define TRIDENT_CONFIG_DID_YOU_MEAN_H_

#include <string>
#include <vector>

namespace trident {

// Returns the Levenshtein edit distance between `a` and `b` (case-sensitive).
int edit_distance(const std::string& a, const std::string& b);

// Returns the candidate closest to `word` if it is close enough to be a plausible typo
// (distance <= max(1, length/3), or one is a prefix of the other), else "".
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

// Returns "did you mean `x`?" for the closest candidate, or "expected one of: a, b, c" when
// none is close. Never empty unless `candidates` is.
std::string suggestion(const std::string& word, const std::vector<std::string>& candidates);

// Returns "a, b, c".
std::string join_names(const std::vector<std::string>& names);

}  // namespace trident

#endif  // TRIDENT_CONFIG_DID_YOU_MEAN_H_
