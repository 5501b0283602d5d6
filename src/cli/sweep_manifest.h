// The manifest of a sweep's output file, kept beside it as FILE.manifest (JSON): how many
// points the whole sweep has, which shard the file holds, and a fingerprint of the resolved
// inputs (every configuration file read, by content hash; the --set, --vary and --fidelity
// arguments). `merge` uses it to tell a complete shard from one that stopped between rows, and
// `sweep --resume` refuses a file written with other inputs, naming what changed.
#ifndef TRIDENT_CLI_SWEEP_MANIFEST_H_
#define TRIDENT_CLI_SWEEP_MANIFEST_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trident {

struct SweepManifest {
  long long points = 0;  // in the whole (unsharded) sweep
  int shard_index = 0;
  int shard_count = 1;
  std::map<std::string, std::string> files;  // absolute path -> content hash (hex)
  std::vector<std::string> sets, varies;
  std::string fidelity;

  // Returns a hash (hex) of everything above but the shard: equal for every shard of a sweep.
  std::string fingerprint() const;
};

// Returns the manifest path of sweep output `out`.
std::string manifest_path(const std::string& out);

// Returns why the sweep must not write the manifest of `out` (FILE.manifest), or "" when it
// may: that name is a symbolic link (it would write wherever the link points, a file the user
// never named), something other than a regular file, or a regular file that is not a trident
// sweep manifest (an unrelated file the user did not name); then whatever
// output_path_problem (core/output_file.h) says of it. Whether it is an input of the run is
// the caller's check (check_not_an_input).
std::string manifest_path_problem(const std::string& out);

// Returns the manifest built from the configuration files read so far (core/input_files.h).
SweepManifest current_manifest(long long points, int shard_index, int shard_count,
                               const std::vector<std::string>& sets,
                               const std::vector<std::string>& varies, const std::string& fidelity);

// The JSON text of `m`, and back. parse_manifest throws ConfigError naming `file` when the
// text is not a manifest.
std::string manifest_json(const SweepManifest& m);
SweepManifest parse_manifest(const std::string& text, const std::string& file);

// Reads the manifest of sweep output `out`: nothing when it has none. Throws ConfigError when
// it exists but cannot be read or parsed.
std::optional<SweepManifest> read_manifest(const std::string& out);

// Returns what differs between the inputs of `before` and `now` ("file X changed", "--set
// differs: ..."), "" when their fingerprints are equal.
std::string manifest_differences(const SweepManifest& before, const SweepManifest& now);

}  // namespace trident

#endif  // TRIDENT_CLI_SWEEP_MANIFEST_H_
