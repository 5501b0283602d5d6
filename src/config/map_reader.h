// Typed, strictly checked access to one YAML map of the configuration. Every failure throws
// ConfigError located at the offending key or value, with the dotted key path.
#ifndef TRIDENT_CONFIG_MAP_READER_H_
#define TRIDENT_CONFIG_MAP_READER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/diagnostics.h"
#include "config/settings.h"
#include "config/yaml_tree.h"
#include "core/units.h"

namespace trident {

class MapReader {
 public:
  // Wraps `node`, found at dotted key path `path` ("cluster.nvlink"; "" for a file root).
  // `where` locates the map itself for "missing key" errors (the key that introduced it).
  // `diag` (may be null: fail at the first problem) collects problems for check_keys and
  // field(), and passes on to nested maps. Throws ConfigError when `node` is not a map.
  // `node` and `diag` must outlive the reader.
  MapReader(const YamlNode& node, std::string path, YamlMark where, Diagnostics* diag = nullptr);

  const std::string& path() const { return path_; }
  const YamlNode& node() const { return *node_; }
  // Returns the location used for the map itself.
  const YamlMark& where() const { return where_; }

  Diagnostics* diagnostics() const { return diag_; }

  // Reports every key not in schema_keys(path()), with a did-you-mean hint: throws at the
  // first one without diagnostics.
  void check_keys() const;

  // Runs `read`, which reads fields of this map: with diagnostics, a ConfigError it throws
  // is recorded and false returned, so that the next field is still checked.
  template <typename F>
  bool field(F&& read) const {
    return attempt(diag_, std::forward<F>(read));
  }
  // Problems recorded so far (0 without diagnostics).
  std::size_t problems() const { return problem_count(diag_); }

  // Returns the value of `key` (written under its name or an alias of it: config/settings.h),
  // or nullptr when absent or written without a value.
  const YamlNode* get(const std::string& key) const;
  bool has(const std::string& key) const { return get(key) != nullptr; }

  // Returns "path.key".
  std::string key_path(const std::string& key) const;
  // Returns the location of `key`'s value, or of the map when `key` is absent.
  SourceLocation location(const std::string& key) const;
  // Throws ConfigError at `key` with `message`.
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  // Throws "missing required key (expected <expected>)" at `key`, unless present.
  void require(const std::string& key, const std::string& expected) const;

  // Each getter returns nullopt when the key is absent; the req_ forms throw instead.
  // Strings: any scalar.
  std::optional<std::string> opt_string(const std::string& key) const;
  std::string req_string(const std::string& key) const;

  // Integers: plain whole numbers within [min, max]; `max` is reported as a limit.
  std::optional<std::int64_t> opt_int(const std::string& key, std::int64_t min,
                                      std::int64_t max) const;
  std::int64_t req_int(const std::string& key, std::int64_t min, std::int64_t max) const;

  // Plain numbers: in (lo, hi] when lo_open, else [lo, hi]; also 0 when zero_allowed (the
  // caller accepts it before asking).
  std::optional<double> opt_number(const std::string& key, double lo, bool lo_open, double hi,
                                   bool zero_allowed = false) const;

  // Quantities with units (see core/units.h): in (min, max] when min_open, else [min, max].
  // `bits_hint`: over the limit, say when the value fits in bits (a NIC written in bytes).
  std::optional<double> opt_quantity(const std::string& key, Dimension dim, double min,
                                     bool min_open, double max, bool bits_hint = false) const;

  // Booleans: true or false.
  std::optional<bool> opt_bool(const std::string& key) const;

  // One of `names`; an unknown name lists them, with a did-you-mean hint.
  std::optional<std::string> opt_choice(const std::string& key,
                                        const std::vector<std::string>& names) const;

  // Settings declared in the table (config/settings.h) for this map's section: each reads
  // `key` with the row's kind and range and returns the value written, else the row's default,
  // else nullopt; a required row that is absent throws. Requires the row to exist and to be of
  // the getter's kind (integer: kInteger; number: kNumber or kQuantity; flag: kBool; text:
  // kString or kChoice).
  std::optional<std::int64_t> integer(const std::string& key) const;
  std::optional<double> number(const std::string& key) const;
  std::optional<bool> flag(const std::string& key) const;
  std::optional<std::string> text(const std::string& key) const;

  // A nested map; absent gives nullopt. Throws when the value is not a map.
  std::optional<MapReader> opt_map(const std::string& key) const;
  MapReader req_map(const std::string& key) const;

 private:
  const YamlNode& scalar_or_fail(const std::string& key, const std::string& expected) const;
  // Returns the entry of `key`, written under its own name or one of its aliases, or nullptr.
  const YamlEntry* entry(const std::string& key) const;
  // Throws at `key` unless `v` has no explicit tag or one of `accepted`.
  void check_tag(const std::string& key, const YamlNode& v,
                 const std::vector<std::string>& accepted, const std::string& expected) const;
  // Returns the row of `key` in this section; throws "missing required key" when it is
  // required and absent.
  const Setting& declared(const std::string& key) const;

  const YamlNode* node_;
  std::string path_;
  YamlMark where_;
  Diagnostics* diag_;
};

// Parses a whole decimal integer ("12", "+3", "-4"); false on anything else or overflow.
bool parse_int64(const std::string& text, std::int64_t* out);

// Parses a finite decimal number ("0.75", "1e-3"); false on anything else.
bool parse_plain_number(const std::string& text, double* out);

}  // namespace trident

#endif  // TRIDENT_CONFIG_MAP_READER_H_
