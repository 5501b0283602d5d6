// Merging the CSV outputs of a sharded `trident plan --shard I/N --format csv`: each shard
// proves the top K of its own candidates, so the best K of their union, in the order the
// unsharded search ranks (step, then bound, then enumeration index), is the whole space's top
// K. Pure; no I/O.
#ifndef TRIDENT_CLI_PLAN_MERGE_H_
#define TRIDENT_CLI_PLAN_MERGE_H_

#include <string>
#include <utility>
#include <vector>

namespace trident {

// The trailer a shard appends to its CSV (comment lines, after the rows):
//   # trident plan shard I/N top K fingerprint F
//   # row R index I step S bound B        (one per ranked row, S and B exact, %.17g)
// F fingerprints the inputs (files read, overrides, limits, GPUs, top) so that shards of
// different searches are not merged.
struct PlanShardRow {
  int rank = 0;
  long index = 0;  // enumeration index of the candidate
  double step_s = 0;
  double bound_s = 0;
};
std::string plan_shard_trailer(int shard_index, int shard_count, int top,
                               const std::string& fingerprint,
                               const std::vector<PlanShardRow>& rows);

// Returns whether `text` is the CSV of `trident plan` (its header starts with "rank,plan,").
bool is_plan_csv(const std::string& text);

// Returns the CSV the unsharded search prints, from the texts of every shard's CSV (`files`:
// name and text): the header, the K best rows renumbered, then the `given` row if any.
// Throws ConfigError naming the file when one is not a shard's output, the shards come from
// different searches (header, fingerprint, N or K differ), a shard appears twice or is
// missing, or the rows disagree with the trailer.
std::string merge_plan_shards(const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace trident

#endif  // TRIDENT_CLI_PLAN_MERGE_H_
