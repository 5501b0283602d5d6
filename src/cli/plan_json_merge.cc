#include "cli/plan_json_merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/plan_output.h"
#include "core/errors.h"
#include "search/plan_search.h"

namespace trident {
namespace {

using Json = nlohmann::ordered_json;

ConfigError shard_error(const std::string& file, const std::string& what) {
  SourceLocation where;
  where.file = file;
  return ConfigError(where, what);
}

// One shard's JSON, read.
struct JsonShard {
  Json doc;
  int index = -1, count = 0, top = 0;
  std::string fingerprint;
  std::string title;                  // without " (shard I/N)"
  std::map<long, const Json*> plans;  // enumeration index -> plan object
  std::vector<PlanShardEntry> proving;
  bool has_after = false;
  PlanShardEntry after;
  long long fitting = 0, pruned_by_memory = 0;  // this shard's
};

JsonShard parse_shard(const std::string& name, const std::string& text) {
  JsonShard f;
  try {
    f.doc = Json::parse(text);
  } catch (const Json::exception& e) {
    throw shard_error(name, std::string("not the JSON of trident plan: ") + e.what());
  }
  if (!f.doc.is_object() || !f.doc.contains("candidates") || !f.doc.contains("plans")) {
    throw shard_error(name, "not the JSON of trident plan (no \"candidates\" and \"plans\")");
  }
  if (!f.doc.contains("shard")) {
    throw shard_error(name,
                      "has no \"shard\" object: it was not written by trident plan --shard I/N "
                      "--format json");
  }
  try {
    const Json& s = f.doc.at("shard");
    f.fitting = f.doc.at("candidates").at("fitting").get<long long>();
    f.pruned_by_memory = f.doc.at("candidates").at("pruned_by_memory").get<long long>();
    f.index = s.at("index").get<int>();
    f.count = s.at("count").get<int>();
    f.top = s.at("top").get<int>();
    f.fingerprint = s.at("fingerprint").get<std::string>();
    if (f.count < 2 || f.index < 0 || f.index >= f.count || f.top < 1) {
      throw shard_error(
          name, fmt::format("malformed \"shard\": shard {}/{} top {}", f.index, f.count, f.top));
    }
    const std::string suffix = fmt::format(" (shard {}/{})", f.index, f.count);
    f.title = f.doc.at("title").get<std::string>();
    if (f.title.size() < suffix.size() ||
        f.title.compare(f.title.size() - suffix.size(), suffix.size(), suffix) != 0) {
      throw shard_error(name, "its title does not end in '" + suffix + "'");
    }
    f.title.resize(f.title.size() - suffix.size());
    const Json& indices = s.at("plan_indices");
    const Json& plans = f.doc.at("plans");
    if (!indices.is_array() || !plans.is_array() || indices.size() != plans.size()) {
      throw shard_error(name, "its \"plan_indices\" do not match its \"plans\"");
    }
    for (size_t i = 0; i < plans.size(); ++i) f.plans[indices[i].get<long>()] = &plans[i];
    for (const Json& e : s.at("proving")) {
      PlanShardEntry p;
      p.index = e.at(0).get<long>();
      p.bound_s = e.at(1).get<double>();
      p.step_s =
          e.at(2).is_null() ? std::numeric_limits<double>::infinity() : e.at(2).get<double>();
      f.proving.push_back(p);
    }
    const Json& after = s.at("after_prefix");
    if (!after.is_null()) {
      f.has_after = true;
      f.after.index = after.at(0).get<long>();
      f.after.bound_s = after.at(1).get<double>();
      f.after.step_s = std::numeric_limits<double>::quiet_NaN();
    }
  } catch (const Json::exception& e) {
    throw shard_error(name, std::string("malformed trident plan shard JSON: ") + e.what());
  }
  return f;
}

}  // namespace

bool is_plan_json(const std::string& text) {
  const size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string::npos || text[start] != '{') return false;
  const Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return doc.is_object() && doc.contains("candidates") && doc.contains("plans");
}

std::string merge_plan_json_shards(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<JsonShard> shards;
  std::map<int, std::string> file_of_shard;
  for (const auto& [name, text] : files) {
    JsonShard f = parse_shard(name, text);
    if (!shards.empty()) {
      const JsonShard& first = shards.front();
      const std::string& first_name = files.front().first;
      const Json& c = f.doc.at("candidates");
      const Json& c0 = first.doc.at("candidates");
      if (f.fingerprint != first.fingerprint || f.count != first.count || f.top != first.top ||
          f.title != first.title ||
          c.value("enumerated", Json()) != c0.value("enumerated", Json()) ||
          c.value("pruned_by_rule", Json()) != c0.value("pruned_by_rule", Json())) {
        throw shard_error(name, "is not a shard of the same search as " + first_name +
                                    " (inputs, shard count, --top or space differ)");
      }
      if (f.doc.value("given_plan", Json()) != first.doc.value("given_plan", Json())) {
        throw shard_error(name, "its given plan differs from " + first_name + "'s");
      }
    }
    if (!file_of_shard.emplace(f.index, name).second) {
      throw shard_error(name, fmt::format("holds shard {}/{}, as {} does", f.index, f.count,
                                          file_of_shard[f.index]));
    }
    shards.push_back(std::move(f));
  }
  if (shards.empty()) return "";
  const JsonShard& first = shards.front();
  std::string absent;
  for (int i = 0; i < first.count; ++i) {
    if (!file_of_shard.count(i))
      absent += (absent.empty() ? "" : ", ") + fmt::format("{}/{}", i, first.count);
  }
  if (!absent.empty()) {
    throw shard_error(files.front().first,
                      "shard " + absent + " of the search is not among the files");
  }

  // Every shard's prefix and first unneeded candidate, in the unsharded order (bound, then
  // index), walked by the unsharded stopping rule.
  std::vector<BoundedCandidate> order;
  std::vector<double> steps;
  std::map<long, const Json*> plans;
  long long fitting = 0, pruned_by_memory = 0;
  {
    std::vector<PlanShardEntry> entries;
    for (const JsonShard& f : shards) {
      entries.insert(entries.end(), f.proving.begin(), f.proving.end());
      if (f.has_after) entries.push_back(f.after);
      plans.insert(f.plans.begin(), f.plans.end());
      fitting += f.fitting;
      pruned_by_memory += f.pruned_by_memory;
    }
    std::sort(entries.begin(), entries.end(), [](const PlanShardEntry& a, const PlanShardEntry& b) {
      if (a.bound_s != b.bound_s) return a.bound_s < b.bound_s;
      return a.index < b.index;
    });
    for (const PlanShardEntry& e : entries) {
      BoundedCandidate b;
      b.index = e.index;
      b.bound.total_s = e.bound_s;
      order.push_back(b);
      steps.push_back(e.step_s);
    }
  }
  bool decided = false;
  const size_t prefix = proven_prefix(order, steps, static_cast<size_t>(first.top), &decided);
  if (!decided) {
    throw shard_error(files.front().first,
                      fmt::format("the shards' prefixes do not prove the top {} (candidate {} was "
                                  "not simulated): the files disagree",
                                  first.top, order[prefix].index));
  }
  std::vector<size_t> ranked;
  long long failed = 0;
  for (size_t i = 0; i < prefix; ++i) {
    if (std::isfinite(steps[i])) {
      ranked.push_back(i);
    } else {
      ++failed;
    }
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](size_t a, size_t b) { return steps[a] < steps[b]; });
  if (ranked.size() > static_cast<size_t>(first.top)) ranked.resize(first.top);

  Json out;
  out["title"] = first.title;
  out["proven"] = true;  // shards never stop at a simulation budget
  Json c = first.doc.at("candidates");
  c["pruned_by_memory"] = pruned_by_memory;
  c["fitting"] = fitting;
  c["pruned_by_bound"] = fitting - static_cast<long long>(prefix);
  c["simulated"] = static_cast<long long>(prefix);
  c["failed"] = failed;
  out["candidates"] = c;
  Json list = Json::array();
  std::vector<PlanResult> metrics;
  std::vector<std::vector<std::string>> sets;
  for (size_t i : ranked) {
    const auto it = plans.find(order[i].index);
    if (it == plans.end()) {
      throw shard_error(files.front().first,
                        fmt::format("candidate {} ranks in the merged top {} but no shard lists "
                                    "its plan: the files disagree",
                                    order[i].index, first.top));
    }
    list.push_back(*it->second);
    try {
      PlanResult r;
      read_plan_metrics(*it->second, &r);
      metrics.push_back(r);
      sets.push_back(it->second->at("set").get<std::vector<std::string>>());
    } catch (const Json::exception& e) {
      throw shard_error(files.front().first,
                        fmt::format("the plan of candidate {} in a shard lacks a field: {}",
                                    order[i].index, e.what()));
    }
  }
  out["plans"] = list;
  out["why"] = metrics.size() < 2 ? "" : why_line(metrics[0], sets[0], metrics[1], sets[1]);
  if (first.doc.contains("given_plan")) out["given_plan"] = first.doc.at("given_plan");
  return out.dump(2) + "\n";
}

}  // namespace trident
