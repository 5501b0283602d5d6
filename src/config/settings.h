// Every input setting, declared once: one table per section (map) of a scenario, each row with
// its key, kind, unit, range, default, a one-line doc and the Megatron-LM or Hugging Face name
// where one exists. The table drives the section readers (types, ranges, defaults), the
// unknown-key and did-you-mean checks, `--set` / `sweep:` key paths, `trident validate`,
// `trident schema` and docs/schema.md. Adding a setting is one row here plus the code that
// uses it. Pure data; no I/O.
#ifndef TRIDENT_CONFIG_SETTINGS_H_
#define TRIDENT_CONFIG_SETTINGS_H_

#include <string>
#include <vector>

#include "core/units.h"

namespace trident {

enum class SettingKind {
  kString,    // any scalar, at most limits::kMaxStringLength characters
  kInteger,   // a plain whole number in [min, max]
  kNumber,    // a plain number in [min, max] (or (min, max] when min_open)
  kQuantity,  // a number with a unit of `dimension`, in [min, max] (or (min, max])
  kBool,      // true or false
  kChoice,    // one of `choices`
  kList,      // a YAML list; its reader checks the entries (doc says what they are)
  kMap,       // a nested section (its own table) or a reference to a file
};

// Returns "string", "integer", "number", "quantity", "bool", "choice", "list", "map".
const char* setting_kind_name(SettingKind kind);

struct Setting {
  std::string key;  // within its section, e.g. "tensor_parallel"
  SettingKind kind = SettingKind::kString;
  Dimension dimension = Dimension::kTime;  // kQuantity only
  double min = 0, max = 0;                 // kInteger, kNumber, kQuantity (SI units)
  bool min_open = false;                   // the range excludes `min`
  bool zero_allowed = false;  // kNumber: 0 is accepted besides [min, max] (0 means "none")
  // kQuantity bandwidths quoted in bits (NICs): a value over the limit written in bytes that
  // fits in bits is reported as the likely slip.
  bool quoted_in_bits = false;
  std::vector<std::string> choices;  // kChoice
  // The value taken when the key is absent, written as in YAML ("1", "false", "1f1b",
  // "2 GFLOP"); "" when there is none (required, derived or optional).
  std::string default_value;
  bool required = false;
  // How the value is derived when absent and it has no fixed default, e.g. "gpus_per_node".
  std::string derived;
  std::string doc;
  // Added to the "missing required key" message: how to give the value.
  std::string missing_hint;
  std::string megatron;      // Megatron-LM argument name, e.g. "--tensor-model-parallel-size"
  std::string hugging_face;  // Hugging Face config.json key, e.g. "num_key_value_heads"
  // Other names the key accepts in YAML, `--set` and sweeps: the Megatron-LM argument's name
  // where it differs ("tensor_model_parallel_size"). Messages name what the user wrote.
  std::vector<std::string> aliases;

  // Returns the range for messages and docs: "an integer from 1 to 8", "(0, 1]", "" if none.
  std::string range_text() const;
  // Returns the default for docs: the fixed default, "= <derived>", "required", or "none".
  std::string default_text() const;
};

struct SettingSection {
  std::string path;  // dotted key path of the map: "" (the scenario file), "plan", ...
  std::string doc;
  std::vector<Setting> settings;
};

// Returns every section, in documentation order.
const std::vector<SettingSection>& settings_sections();

// Returns the section at dotted `path`, or nullptr when no map lives there.
const SettingSection* find_section(const std::string& path);

// Returns the row of `key` in the section at `path`, or nullptr.
const Setting* find_setting(const std::string& path, const std::string& key);

// Returns the row of `key` in the section at `path`. Requires it to exist (a reader asking for
// an undeclared setting is a programming error: throws std::logic_error).
const Setting& setting(const std::string& path, const std::string& key);

// Returns the keys of the section at `path` in table order, or nullptr.
const std::vector<std::string>* section_keys(const std::string& path);

// Returns the keys and their aliases of the section at `path`, or nullptr (for did-you-mean).
const std::vector<std::string>* section_names(const std::string& path);

// Returns the key that `name` (a key or an alias) stands for in the section at `path`, or ""
// when the section has no such name.
std::string canonical_key(const std::string& path, const std::string& name);

// Returns dotted `path` with every alias replaced by its key ("plan.tensor_model_parallel_size"
// -> "plan.tensor_parallel"); parts that are not names of their section are kept.
std::string canonical_key_path(const std::string& path);

}  // namespace trident

#endif  // TRIDENT_CONFIG_SETTINGS_H_
