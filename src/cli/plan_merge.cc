#include "cli/plan_merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "core/errors.h"

namespace trident {
namespace {

constexpr const char kShardLine[] = "# trident plan shard ";
constexpr const char kRowLine[] = "# row ";

ConfigError shard_error(const std::string& file, int line, const std::string& what) {
  SourceLocation where;
  where.file = file;
  where.line = line;
  return ConfigError(where, what);
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// One shard's file, read.
struct ShardFile {
  std::string header;  // with '\n'
  int index = -1, count = 0, top = 0;
  std::string fingerprint;
  std::map<int, std::string> rows;  // rank -> line (with '\n')
  std::string given;                // the `given` row, or ""
  std::vector<PlanShardRow> ranked;
};

ShardFile parse_shard(const std::string& name, const std::string& text) {
  ShardFile f;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (in.eof() && !text.empty() && text.back() != '\n') {
      throw shard_error(name, number, "its last line is incomplete (an interrupted shard)");
    }
    if (number == 1) {
      f.header = line + "\n";
      continue;
    }
    if (starts_with(line, kShardLine)) {
      std::istringstream t(line.substr(sizeof kShardLine - 1));
      char slash = 0;
      std::string top_word, fp_word;
      if (!(t >> f.index >> slash >> f.count >> top_word >> f.top >> fp_word >> f.fingerprint) ||
          slash != '/' || top_word != "top" || fp_word != "fingerprint" || f.count < 1 ||
          f.index < 0 || f.index >= f.count || f.top < 1) {
        throw shard_error(name, number, "malformed shard line: '" + line + "'");
      }
      continue;
    }
    if (starts_with(line, kRowLine)) {
      std::istringstream t(line.substr(sizeof kRowLine - 1));
      PlanShardRow r;
      std::string w1, w2, w3;
      if (!(t >> r.rank >> w1 >> r.index >> w2 >> r.step_s >> w3 >> r.bound_s) || w1 != "index" ||
          w2 != "step" || w3 != "bound") {
        throw shard_error(name, number, "malformed row line: '" + line + "'");
      }
      f.ranked.push_back(r);
      continue;
    }
    const std::string rank = line.substr(0, line.find(','));
    if (rank == "given") {
      f.given = line + "\n";
      continue;
    }
    int k = 0;
    try {
      size_t used = 0;
      k = std::stoi(rank, &used);
      if (used != rank.size() || k < 1) throw std::invalid_argument(rank);
    } catch (const std::exception&) {
      throw shard_error(name, number, "not a row of trident plan: '" + line + "'");
    }
    f.rows[k] = line + "\n";
  }
  if (!is_plan_csv(text)) {
    throw shard_error(name, 1, "not the CSV of trident plan (header 'rank,plan,...')");
  }
  if (f.count == 0) {
    throw shard_error(name, 0,
                      "has no shard line: it was not written by trident plan --shard I/N "
                      "--format csv");
  }
  if (f.ranked.size() != f.rows.size()) {
    throw shard_error(name, 0, "its row lines do not match its ranked rows");
  }
  for (const PlanShardRow& r : f.ranked) {
    if (!f.rows.count(r.rank)) {
      throw shard_error(name, 0, fmt::format("its row line names rank {}, which it lacks", r.rank));
    }
  }
  return f;
}

}  // namespace

std::string plan_shard_trailer(int shard_index, int shard_count, int top,
                               const std::string& fingerprint,
                               const std::vector<PlanShardRow>& rows) {
  std::string out = fmt::format("{}{}/{} top {} fingerprint {}\n", kShardLine, shard_index,
                                shard_count, top, fingerprint);
  for (const PlanShardRow& r : rows) {
    out += fmt::format("{}{} index {} step {:.17g} bound {:.17g}\n", kRowLine, r.rank, r.index,
                       r.step_s, r.bound_s);
  }
  return out;
}

bool is_plan_csv(const std::string& text) { return starts_with(text, "rank,plan,"); }

std::string merge_plan_shards(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<ShardFile> shards;
  std::map<int, std::string> file_of_shard;
  for (const auto& [name, text] : files) {
    ShardFile f = parse_shard(name, text);
    if (!shards.empty()) {
      const ShardFile& first = shards.front();
      const std::string& first_name = files.front().first;
      if (f.header != first.header || f.fingerprint != first.fingerprint ||
          f.count != first.count || f.top != first.top) {
        throw shard_error(name, 0,
                          "is not a shard of the same search as " + first_name +
                              " (header, inputs, shard count or --top differ)");
      }
      if (f.given != first.given) {
        throw shard_error(name, 0, "its given row differs from " + first_name + "'s");
      }
    }
    if (!file_of_shard.emplace(f.index, name).second) {
      throw shard_error(
          name, 0,
          fmt::format("holds shard {}/{}, as {} does", f.index, f.count, file_of_shard[f.index]));
    }
    shards.push_back(std::move(f));
  }
  if (shards.empty()) return "";
  const int count = shards.front().count;
  std::string absent;
  for (int i = 0; i < count; ++i) {
    if (!file_of_shard.count(i))
      absent += (absent.empty() ? "" : ", ") + fmt::format("{}/{}", i, count);
  }
  if (!absent.empty()) {
    throw shard_error(files.front().first, 0,
                      "shard " + absent + " of the search is not among the files");
  }
  // The unsharded order: by step, then bound, then enumeration index (plan_search's order).
  struct Entry {
    PlanShardRow row;
    const std::string* line;
  };
  std::vector<Entry> all;
  for (const ShardFile& f : shards) {
    for (const PlanShardRow& r : f.ranked) all.push_back({r, &f.rows.at(r.rank)});
  }
  std::sort(all.begin(), all.end(), [](const Entry& a, const Entry& b) {
    if (a.row.step_s != b.row.step_s) return a.row.step_s < b.row.step_s;
    if (a.row.bound_s != b.row.bound_s) return a.row.bound_s < b.row.bound_s;
    return a.row.index < b.row.index;
  });
  if (all.size() > static_cast<size_t>(shards.front().top)) all.resize(shards.front().top);
  std::string out = shards.front().header;
  for (size_t i = 0; i < all.size(); ++i) {
    const std::string& line = *all[i].line;
    out += std::to_string(i + 1) + line.substr(line.find(','));
  }
  return out + shards.front().given;
}

}  // namespace trident
