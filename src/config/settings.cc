// The settings table (config/settings.h): the row builders (config/settings_rows.h), the
// scenario section, the table's assembly and its look-ups. The other sections' rows are in
// settings_cluster.cc, settings_reliability.cc, settings_model.cc, settings_plan.cc and
// settings_plan_moe.cc. Field limits come from config/limits.h; every quantity has a lower limit
// as well as an upper one, so a slipped exponent (`1e-300 GB/s`) is refused at load instead of
// stalling the engine.
#include "config/settings.h"

#include <cstdio>
#include <map>
#include <stdexcept>
#include <utility>

#include "config/settings_rows.h"

namespace trident {

// Row builders (config/settings_rows.h).
Setting row(std::string key, SettingKind kind, std::string doc) {
  Setting s;
  s.key = std::move(key);
  s.kind = kind;
  s.doc = std::move(doc);
  return s;
}
Setting integer(std::string key, double min, double max, std::string doc) {
  Setting s = row(std::move(key), SettingKind::kInteger, std::move(doc));
  s.min = min;
  s.max = max;
  return s;
}
Setting number(std::string key, double min, double max, std::string doc) {
  Setting s = row(std::move(key), SettingKind::kNumber, std::move(doc));
  s.min = min;
  s.max = max;
  return s;
}
Setting quantity(std::string key, Dimension dim, double min, double max, std::string doc) {
  Setting s = row(std::move(key), SettingKind::kQuantity, std::move(doc));
  s.dimension = dim;
  s.min = min;
  s.max = max;
  return s;
}
Setting choice(std::string key, std::vector<std::string> names, std::string doc) {
  Setting s = row(std::move(key), SettingKind::kChoice, std::move(doc));
  s.choices = std::move(names);
  return s;
}
Setting boolean(std::string key, std::string doc) {
  return row(std::move(key), SettingKind::kBool, std::move(doc));
}

Setting def(Setting s, std::string value) {
  s.default_value = std::move(value);
  return s;
}
Setting in_bits(Setting s) {
  s.quoted_in_bits = true;
  return s;
}
Setting hint(Setting s, std::string how) {
  s.missing_hint = std::move(how);
  return s;
}
Setting req(Setting s) {
  s.required = true;
  return s;
}
Setting derived(Setting s, std::string how) {
  s.derived = std::move(how);
  return s;
}
Setting mg(Setting s, std::string megatron) {
  s.megatron = std::move(megatron);
  if (s.megatron.rfind("--", 0) == 0 && s.megatron.find(' ') == std::string::npos) {
    std::string name = s.megatron.substr(2);
    for (char& c : name) c = c == '-' ? '_' : c;
    if (name != s.key) s.aliases.push_back(name);
  }
  return s;
}
Setting alias(Setting s, std::string name) {
  s.aliases.push_back(std::move(name));
  return s;
}
Setting hf(Setting s, std::string name) {
  s.hugging_face = std::move(name);
  return s;
}

namespace {

std::vector<SettingSection> build_sections() {
  using K = SettingKind;
  std::vector<SettingSection> out;
  out.push_back(
      {"",
       "The scenario file: a cluster, a model and a plan (each inline or a reference), plus "
       "optional overrides and sweep axes.",
       {
           row("name", K::kString, "Scenario name, shown in reports."),
           row("description", K::kString, "Free text for people."),
           req(row("cluster", K::kMap,
                   "The cluster: a shipped name's file path, a path relative to this file, or an "
                   "inline map (section `cluster`).")),
           req(row("model", K::kMap,
                   "The model: a path to a model YAML file or a Hugging Face config.json "
                   "(`hf:` prefix or `.json`), or an inline map (section `model`).")),
           req(row("plan", K::kMap,
                   "The parallel plan: a path or an inline map (section `plan`).")),
           row("overrides", K::kMap,
               "Settings applied after references are loaded, as `--set` does: dotted key paths "
               "to values, e.g. `plan.tensor_parallel: 4`."),
           row("sweep", K::kMap,
               "Axes for `trident sweep`: dotted key paths to non-empty lists of values."),
           row("search", K::kMap,
               "For `trident plan`: searched plan keys, each pinned to one value "
               "(`plan.schedule: 1f1b`, as --fix) or limited to a list (`plan.tensor_parallel: "
               "[4, 8]`, as --vary); docs/plan.md."),
       }});
  append_cluster_sections(&out);
  append_reliability_sections(&out);
  append_model_section(&out);
  append_plan_sections(&out);
  return out;
}

std::string short_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

}  // namespace

const char* setting_kind_name(SettingKind kind) {
  switch (kind) {
    case SettingKind::kString:
      return "string";
    case SettingKind::kInteger:
      return "integer";
    case SettingKind::kNumber:
      return "number";
    case SettingKind::kQuantity:
      return "quantity";
    case SettingKind::kBool:
      return "bool";
    case SettingKind::kChoice:
      return "choice";
    case SettingKind::kList:
      return "list";
    case SettingKind::kMap:
      return "map";
  }
  return "?";
}

std::string Setting::range_text() const {
  const std::string lo = min_open ? "(" : "[";
  switch (kind) {
    case SettingKind::kInteger:
      return "[" + short_number(min) + ", " + short_number(max) + "]";
    case SettingKind::kNumber:
      return (zero_allowed ? "0 or " : "") + lo + short_number(min) + ", " + short_number(max) +
             "]";
    case SettingKind::kQuantity:
      return lo + format_quantity(min, dimension) + ", " + format_quantity(max, dimension) + "]";
    case SettingKind::kChoice: {
      std::string out;
      for (const std::string& c : choices) out += (out.empty() ? "" : " | ") + c;
      return out;
    }
    case SettingKind::kBool:
      return "true | false";
    case SettingKind::kString:
    case SettingKind::kList:
    case SettingKind::kMap:
      break;
  }
  return "";
}

std::string Setting::default_text() const {
  if (!default_value.empty()) return default_value;
  if (required) return "required";
  if (!derived.empty()) return "= " + derived;
  return "none";
}

const std::vector<SettingSection>& settings_sections() {
  static const std::vector<SettingSection> kSections = build_sections();
  return kSections;
}

const SettingSection* find_section(const std::string& path) {
  for (const SettingSection& s : settings_sections()) {
    if (s.path == path) return &s;
  }
  return nullptr;
}

const Setting* find_setting(const std::string& path, const std::string& key) {
  const SettingSection* section = find_section(path);
  if (section == nullptr) return nullptr;
  for (const Setting& s : section->settings) {
    if (s.key == key) return &s;
  }
  return nullptr;
}

const Setting& setting(const std::string& path, const std::string& key) {
  const Setting* s = find_setting(path, key);
  if (s == nullptr) throw std::logic_error("undeclared setting " + path + "." + key);
  return *s;
}

const std::vector<std::string>* section_names(const std::string& path) {
  static const std::map<std::string, std::vector<std::string>> kNames = [] {
    std::map<std::string, std::vector<std::string>> names;
    for (const SettingSection& s : settings_sections()) {
      std::vector<std::string>& list = names[s.path];
      for (const Setting& row : s.settings) {
        list.push_back(row.key);
        list.insert(list.end(), row.aliases.begin(), row.aliases.end());
      }
    }
    return names;
  }();
  auto it = kNames.find(path);
  return it == kNames.end() ? nullptr : &it->second;
}

std::string canonical_key(const std::string& path, const std::string& name) {
  const SettingSection* section = find_section(path);
  if (section == nullptr) return "";
  for (const Setting& row : section->settings) {
    if (row.key == name) return row.key;
    for (const std::string& a : row.aliases) {
      if (a == name) return row.key;
    }
  }
  return "";
}

std::string canonical_key_path(const std::string& path) {
  std::string out, prefix;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? dot : dot - start);
    const std::string key = canonical_key(prefix, part);
    const std::string name = key.empty() ? part : key;
    out += (start == 0 ? "" : ".") + name;
    prefix = prefix.empty() ? name : prefix + "." + name;
    if (dot == std::string::npos) return out;
    start = dot + 1;
  }
}

const std::vector<std::string>* section_keys(const std::string& path) {
  static const std::map<std::string, std::vector<std::string>> kKeys = [] {
    std::map<std::string, std::vector<std::string>> keys;
    for (const SettingSection& s : settings_sections()) {
      std::vector<std::string>& list = keys[s.path];
      for (const Setting& row : s.settings) list.push_back(row.key);
    }
    return keys;
  }();
  auto it = kKeys.find(path);
  return it == kKeys.end() ? nullptr : &it->second;
}

}  // namespace trident
