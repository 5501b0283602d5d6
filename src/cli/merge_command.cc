// trident merge: joins the CSV files of a sharded sweep back into one, in point order.
#include <sys/stat.h>

#include <boost/program_options.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/plan_json_merge.h"
#include "cli/plan_merge.h"
#include "cli/sweep_csv.h"
#include "cli/sweep_manifest.h"
#include "core/errors.h"

namespace po = boost::program_options;

namespace trident {
namespace {

ConfigError merge_error(const std::string& file, const std::string& what) {
  SourceLocation where;
  where.file = file;
  return ConfigError(where, what);
}

// Returns the text of shard file `file`. Throws ConfigError saying what `file` is when it is
// missing, a directory or not a regular file (a device such as /dev/zero never ends).
std::string read_shard_file(const std::string& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) {
    throw merge_error(file, errno == ENOENT ? "no such file"
                                            : std::string("cannot open: ") + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) throw merge_error(file, "is a directory, not a sweep CSV file");
  if (!S_ISREG(st.st_mode)) {
    throw merge_error(file,
                      "not a regular file (a device, FIFO or socket): expected a sweep CSV file");
  }
  std::ifstream in(file, std::ios::binary);
  std::string text(std::istreambuf_iterator<char>(in), {});
  if (!in && !in.eof())
    throw merge_error(file, std::string("cannot read: ") + std::strerror(errno));
  return text;
}

}  // namespace

int run_merge_command(const std::vector<std::string>& args) {
  po::options_description opts(
      "usage: trident merge FILE... > all.csv\n\n"
      "Joins the CSV files written by `trident sweep --shard I/N --out FILE` into the file an\n"
      "unsharded sweep writes: one header, the rows of every file sorted by their point index.\n"
      "The files must come from the same sweep (same header); a point in two files must have\n"
      "the same row in both. It is an error when a file ends in a torn row (rerun that shard\n"
      "with --resume) or when points are missing between the first and the last.\n"
      "Given the CSV (or JSON) files of `trident plan --shard I/N --format csv|json` (every\n"
      "shard of one search), prints the CSV (or JSON) of the unsharded search: the best --top\n"
      "rows of the union, and in JSON the unsharded search's counts.\n\noptions");
  opts.add_options()("help,h", "show this help");
  std::vector<std::string> files;
  po::variables_map vm;
  if (!parse_command_line(args, opts, -1, "missing FILE arguments (the shards' CSV files)", &files,
                          &vm)) {
    return 0;
  }
  if (!files.empty()) {
    const std::string first = read_shard_file(files.front());
    const bool csv = is_plan_csv(first), json = !csv && is_plan_json(first);
    if (csv || json) {
      // Shards of `trident plan --shard I/N --format csv|json`: the best K of their union.
      std::vector<std::pair<std::string, std::string>> texts;
      for (const std::string& file : files) {
        texts.emplace_back(file, read_shard_file(file));
        const std::string& text = texts.back().second;
        if (csv ? is_plan_csv(text) : is_plan_json(text)) continue;
        throw merge_error(file, std::string("is not the ") + (csv ? "CSV" : "JSON") +
                                    " of trident plan, as " + files.front() +
                                    " is: merge the shards of one --format");
      }
      std::cout << (csv ? merge_plan_shards(texts) : merge_plan_json_shards(texts));
      return 0;
    }
  }

  std::string header;
  std::string header_file;
  // Manifests (sweep --out FILE writes FILE.manifest): the sweep's point count and shards.
  std::optional<SweepManifest> first_manifest;
  std::string manifest_file;
  std::set<int> shards_seen;
  size_t with_manifest = 0;
  std::map<int, std::string> rows;         // point index -> line
  std::map<int, std::string> file_of_row;  // point index -> file it came from
  for (const std::string& file : files) {
    const SweepFileContent content = parse_sweep_file(read_shard_file(file), file);
    if (const std::optional<SweepManifest> m = read_manifest(file)) {
      ++with_manifest;
      if (!first_manifest) {
        first_manifest = m;
        manifest_file = file;
      } else if (m->fingerprint() != first_manifest->fingerprint() ||
                 m->shard_count != first_manifest->shard_count) {
        throw merge_error(file, "its manifest differs from " + manifest_file +
                                    "'s: the files are not from the same sweep (" +
                                    manifest_differences(*first_manifest, *m) + ")");
      }
      shards_seen.insert(m->shard_index);
    }
    if (content.torn) {
      throw merge_error(file,
                        "its last row is incomplete (an interrupted shard: rerun it with "
                        "--resume before merging)");
    }
    if (content.header.empty()) throw merge_error(file, "empty file (a shard that never started?)");
    if (header.empty()) {
      header = content.header;
      header_file = file;
    } else if (content.header != header) {
      throw merge_error(file, "its header differs from " + header_file +
                                  "'s: the files are not from the same sweep");
    }
    for (const SweepFileContent::Row& row : content.rows) {
      const auto [it, inserted] = rows.emplace(row.index, row.line);
      if (!inserted && file_of_row[row.index] == file) {
        throw merge_error(file, "point " + std::to_string(row.index) +
                                    " appears twice in this file (not a file written by sweep)");
      }
      if (inserted) {
        file_of_row[row.index] = file;
      } else if (it->second != row.line) {
        const std::string& earlier = file_of_row[row.index];
        throw merge_error(
            file, "point " + std::to_string(row.index) + " has another row " + "in " + earlier);
      }
    }
  }
  if (first_manifest && with_manifest == files.size()) {
    // Every file knows the sweep's size: name the shards not given, then the points missing.
    std::string absent;
    for (int i = 0; i < first_manifest->shard_count; ++i) {
      if (!shards_seen.count(i)) {
        absent += (absent.empty() ? "" : ", ") + std::to_string(i) + "/" +
                  std::to_string(first_manifest->shard_count);
      }
    }
    if (!absent.empty()) {
      throw merge_error(files.front(),
                        "points missing: shard " + absent + " of the sweep is not among the files");
    }
  }
  const long long known_points =
      first_manifest && with_manifest == files.size() ? first_manifest->points : 0;
  if (!rows.empty() || known_points > 0) {
    std::string missing;
    int count = 0;
    const long long end =
        std::max<long long>(known_points, rows.empty() ? 0 : rows.rbegin()->first);
    for (int i = 0; i < end; ++i) {
      if (rows.count(i)) continue;
      if (++count <= 10) missing += (missing.empty() ? "" : ", ") + std::to_string(i);
    }
    if (count > 0 && known_points > 0) {
      throw merge_error(files.front(),
                        std::to_string(count) + " of the sweep's " + std::to_string(known_points) +
                            " points missing from the files (" + missing +
                            (count > 10 ? ", ..." : "") +
                            "): a shard stopped early or is still running; rerun it with --resume");
    }
    if (count > 0) {
      throw merge_error(files.front(), std::to_string(count) + " points missing from the files (" +
                                           missing + (count > 10 ? ", ..." : "") +
                                           "): a shard failed, is still running or was not named");
    }
  }
  std::cout << header;
  for (const auto& [index, line] : rows) std::cout << line;
  return 0;  // main flushes standard output and checks that it was written
}

}  // namespace trident
