// Merging the JSON outputs of a sharded `trident plan --shard I/N --format json`: the ranked
// plans as the CSV merge ranks them (cli/plan_merge.h), and the counts of the unsharded
// search, its proving prefix found again from the shards' own prefixes. Pure; no I/O.
#ifndef TRIDENT_CLI_PLAN_JSON_MERGE_H_
#define TRIDENT_CLI_PLAN_JSON_MERGE_H_

#include <string>
#include <utility>
#include <vector>

namespace trident {

// Returns whether `text` is the JSON of `trident plan` (an object with "candidates" and
// "plans").
bool is_plan_json(const std::string& text);

// Returns the JSON the unsharded search prints, byte for byte, from the texts of every
// shard's JSON (`files`: name and text). The unsharded proving prefix is the bound-ordered
// (bound, then index) prefix of all fitting candidates that proves the top K; every
// candidate in it lies in some shard's prefix, since a shard's K-th best step is no better
// than the union's, and the walk stops at the latest at a shard's first unneeded candidate,
// which each shard names ("after_prefix"). Throws ConfigError naming the file when one is not
// a shard's JSON, the shards come from different searches (fingerprint, N, K, title,
// enumeration counts or given plan differ), a shard appears twice or is missing, or the
// shards' prefixes disagree.
std::string merge_plan_json_shards(const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace trident

#endif  // TRIDENT_CLI_PLAN_JSON_MERGE_H_
