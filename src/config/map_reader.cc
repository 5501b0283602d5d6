#include "config/map_reader.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "config/did_you_mean.h"
#include "config/limits.h"
#include "config/schema.h"
#include "config/settings.h"

namespace trident {

bool parse_int64(const std::string& text, std::int64_t* out) {
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  if (i == text.size()) return false;
  for (size_t j = i; j < text.size(); ++j) {
    if (!std::isdigit(static_cast<unsigned char>(text[j]))) return false;
  }
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE || end != text.c_str() + text.size()) return false;
  *out = v;
  return true;
}

bool parse_plain_number(const std::string& text, double* out) {
  // Digits, sign, point and exponent only: rejects "nan", "inf", hex and junk.
  if (text.empty()) return false;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.' &&
        c != 'e' && c != 'E') {
      return false;
    }
  }
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

namespace {

std::string int_range(std::int64_t min, std::int64_t max) {
  return "an integer from " + std::to_string(min) + " to " + std::to_string(max);
}

// Returns "" when `text` is valid UTF-8 without control characters (tab excepted), else the
// reason, naming the byte offset.
std::string text_problem(const std::string& text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t') || c == 0x7F) {
        char code[16];
        std::snprintf(code, sizeof code, "U+%04X", c);
        return std::string("contains the control character ") + code + " at byte " +
               std::to_string(i + 1);
      }
      ++i;
      continue;
    }
    // Lead byte of a 2-, 3- or 4-byte sequence (0xC0, 0xC1 and above 0xF4 never occur).
    int extra = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      extra = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      extra = 2;
    } else if (c >= 0xF0 && c <= 0xF4) {
      extra = 3;
    }
    bool ok = extra > 0 && i + extra < text.size();
    for (int k = 1; ok && k <= extra; ++k) {
      ok = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    }
    if (!ok) return "is not valid UTF-8 (byte " + std::to_string(i + 1) + ")";
    i += static_cast<size_t>(extra) + 1;
  }
  return "";
}

// For a bandwidth over its limit written in bytes per second that would fit as bits per second,
// returns "; 400 GB/s is 3.2 Tbps, did you mean `400 Gbps`?"; else "".
std::string bits_for_bytes_hint(const std::string& text, double value, double max, Dimension dim) {
  if (dim != Dimension::kBandwidth || value / 8 > max) return "";
  const size_t unit = text.find_first_not_of("0123456789.eE+- ");
  if (unit == std::string::npos) return "";
  std::string bits_unit = text.substr(unit);
  size_t b = bits_unit.find("B/s");
  if (b == std::string::npos) b = bits_unit.find("Bps");
  if (b == std::string::npos) return "";
  bits_unit.replace(b, 3, "bps");
  char rate[64];
  std::snprintf(rate, sizeof rate, "%g Tbps", value * 8 / 1e12);
  std::string number = text.substr(0, unit);
  while (!number.empty() && number.back() == ' ') number.pop_back();
  return std::string("; ") + text + " is " + rate + ", did you mean `" + number + " " + bits_unit +
         "`?";
}

std::string short_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

MapReader::MapReader(const YamlNode& node, std::string path, YamlMark where, Diagnostics* diag)
    : node_(&node), path_(std::move(path)), where_(std::move(where)), diag_(diag) {
  if (!node.is_map()) {
    SourceLocation loc = location_of(node.is_null() ? where_ : node.mark, path_);
    throw ConfigError(loc, "expected a map of settings, got " + node.describe());
  }
}

void MapReader::check_keys() const {
  const std::vector<std::string>* allowed = section_names(path_);
  if (allowed == nullptr) return;
  for (const YamlEntry& e : node_->entries) {
    const std::string key = canonical_key(path_, e.key);
    if (!key.empty()) {
      // A key and its alias (or two aliases) name one setting: refuse the second.
      const YamlEntry* first = entry(key);
      if (first != &e) {
        report(diag_, ConfigError(location_of(e.key_mark, key_path(e.key)),
                                  "`" + e.key + "` and `" + first->key + "` name the same " +
                                      "setting `" + key_path(key) + "` (expected one of them)"));
      }
      continue;
    }
    // Past the cap nothing more is listed: stop before spending time on hints.
    if (problems() >= static_cast<std::size_t>(limits::kMaxProblemsPerFile)) return;
    const std::string hint = e.key.size() > 200 ? "expected one of: " + join_names(*allowed)
                                                : suggestion(e.key, *allowed);
    report(diag_, ConfigError(location_of(e.key_mark, key_path(e.key)),
                              "unknown key `" + excerpt(e.key) + "` (" + hint + ")"));
  }
}

const YamlEntry* MapReader::entry(const std::string& key) const {
  if (const YamlEntry* e = node_->find(key)) return e;
  const Setting* row = find_setting(path_, key);
  if (row == nullptr) return nullptr;
  for (const std::string& alias : row->aliases) {
    if (const YamlEntry* e = node_->find(alias)) return e;
  }
  return nullptr;
}

const YamlNode* MapReader::get(const std::string& key) const {
  const YamlEntry* e = entry(key);
  if (e == nullptr || e->value->is_null()) return nullptr;
  return e->value.get();
}

std::string MapReader::key_path(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

SourceLocation MapReader::location(const std::string& key) const {
  const YamlEntry* e = entry(key);
  if (e == nullptr) return location_of(where_, key_path(key));
  // A key written without a value points at the key; messages name what was written.
  return location_of(e->value->is_null() ? e->key_mark : e->value->mark,
                     key_path(e->written_as.empty() ? e->key : e->written_as));
}

void MapReader::fail(const std::string& key, const std::string& message) const {
  throw ConfigError(location(key), message);
}

void MapReader::require(const std::string& key, const std::string& expected) const {
  if (has(key)) return;
  const YamlEntry* e = entry(key);
  fail(key, std::string(e != nullptr ? "no value given" : "missing required key") + " (expected " +
                expected + ")");
}

const YamlNode& MapReader::scalar_or_fail(const std::string& key,
                                          const std::string& expected) const {
  const YamlNode* v = get(key);
  if (!v->is_scalar()) fail(key, "expected " + expected + ", got " + v->describe());
  return *v;
}

void MapReader::check_tag(const std::string& key, const YamlNode& v,
                          const std::vector<std::string>& accepted,
                          const std::string& expected) const {
  if (v.tag.empty()) return;
  for (const std::string& t : accepted) {
    if (v.tag == t) return;
  }
  fail(key, "the tag `" + excerpt(v.tag) + "` is not accepted here (expected " + expected +
                ", written without a tag)");
}

std::optional<std::string> MapReader::opt_string(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const YamlNode& node = scalar_or_fail(key, "a string");
  check_tag(key, node, {"!!str"}, "a string");
  const std::string& text = node.scalar;
  const std::string problem = text_problem(text);
  if (!problem.empty()) fail(key, "the text " + problem + " (expected printable UTF-8 text)");
  if (static_cast<std::int64_t>(text.size()) > limits::kMaxStringLength) {
    fail(key, "`" + excerpt(text) + "` is " + std::to_string(text.size()) +
                  " characters long, more than the limit of " +
                  std::to_string(limits::kMaxStringLength));
  }
  return text;
}

std::string MapReader::req_string(const std::string& key) const {
  require(key, "a string");
  return *opt_string(key);
}

std::optional<std::int64_t> MapReader::opt_int(const std::string& key, std::int64_t min,
                                               std::int64_t max) const {
  if (!has(key)) return std::nullopt;
  const std::string expected = int_range(min, max);
  const YamlNode& v = scalar_or_fail(key, expected);
  check_tag(key, v, {"!!int"}, expected);
  if (v.quoted) {
    fail(key, "expected " + expected + ", got the quoted string `" + excerpt(v.scalar) +
                  "` (write the number without quotes)");
  }
  const size_t digits = v.scalar.find_first_not_of("+-");
  if (digits != std::string::npos && v.scalar.size() > digits + 1 && v.scalar[digits] == '0' &&
      std::isdigit(static_cast<unsigned char>(v.scalar[digits + 1]))) {
    fail(key, "`" + excerpt(v.scalar) + "` has a leading zero (expected " + expected +
                  " without leading zeros: YAML readers disagree on whether it is octal)");
  }
  std::int64_t n = 0;
  if (!parse_int64(v.scalar, &n)) {
    double d = 0;
    if (parse_plain_number(v.scalar, &d) && std::fabs(d) > 9.2e18) {
      fail(key, "`" + excerpt(v.scalar) + "` is too large (expected " + expected + ")");
    }
    bool all_digits = !v.scalar.empty();
    for (char c : v.scalar) all_digits = all_digits && std::isdigit(static_cast<unsigned char>(c));
    if (all_digits) {
      fail(key, "`" + excerpt(v.scalar) + "` is too large (expected " + expected + ")");
    }
    fail(key, "`" + excerpt(v.scalar) + "` is not an integer (expected " + expected + ")");
  }
  if (n < min) {
    fail(key, std::to_string(n) + " is too small (expected " + expected + ")");
  }
  if (n > max) {
    fail(key, std::to_string(n) + " exceeds the limit of " + std::to_string(max) + " (expected " +
                  expected + ")");
  }
  return n;
}

std::int64_t MapReader::req_int(const std::string& key, std::int64_t min, std::int64_t max) const {
  require(key, int_range(min, max));
  return *opt_int(key, min, max);
}

std::optional<double> MapReader::opt_number(const std::string& key, double lo, bool lo_open,
                                            double hi, bool zero_allowed) const {
  if (!has(key)) return std::nullopt;
  const std::string expected = std::string(zero_allowed ? "0 or a number in " : "a number in ") +
                               (lo_open ? "(" : "[") + short_double(lo) + ", " + short_double(hi) +
                               "]";
  const YamlNode& v = scalar_or_fail(key, expected);
  check_tag(key, v, {"!!float", "!!int"}, expected);
  double d = 0;
  if (v.quoted || !parse_plain_number(v.scalar, &d)) {
    fail(key, "`" + excerpt(v.scalar) + "` is not a number (expected " + expected + ")");
  }
  if (d < lo || (lo_open && d == lo) || d > hi) {
    fail(key, "`" + excerpt(v.scalar) + "` is out of range (expected " + expected + ")");
  }
  return d;
}

std::optional<double> MapReader::opt_quantity(const std::string& key, Dimension dim, double min,
                                              bool min_open, double max, bool bits_hint) const {
  if (!has(key)) return std::nullopt;
  const std::string expected = std::string("a ") + dimension_name(dim) + ": " + accepted_units(dim);
  const YamlNode& v = scalar_or_fail(key, expected);
  check_tag(key, v, {"!!str"}, expected);
  if (v.scalar.size() > 100) {
    fail(key, "`" + excerpt(v.scalar) + "` is too long for a quantity (" + expected + ")");
  }
  std::string error;
  std::optional<double> q = parse_quantity(v.scalar, dim, &error);
  if (!q) fail(key, error);
  if (*q <= 0 && (min > 0 || min_open)) {
    fail(key, "`" + v.scalar + "` must be greater than zero (expected a positive " +
                  dimension_name(dim) +
                  (min > 0 ? ", at least " + format_quantity(min, dim) : std::string()) + ")");
  }
  if (*q < min || (min_open && *q == min)) {
    fail(key, "`" + v.scalar + "` is below the lower limit of " + format_quantity(min, dim));
  }
  if (*q > max) {
    fail(key, "`" + v.scalar + "` exceeds the limit of " + format_quantity(max, dim) +
                  (bits_hint ? bits_for_bytes_hint(v.scalar, *q, max, dim) : std::string()));
  }
  return q;
}

std::optional<bool> MapReader::opt_bool(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const YamlNode& v = scalar_or_fail(key, "true or false");
  check_tag(key, v, {"!!bool"}, "true or false");
  if (!v.quoted) {
    if (v.scalar == "true" || v.scalar == "True" || v.scalar == "TRUE") return true;
    if (v.scalar == "false" || v.scalar == "False" || v.scalar == "FALSE") return false;
  }
  fail(key, "`" + excerpt(v.scalar) + "` is not a boolean (expected true or false)");
}

std::optional<std::string> MapReader::opt_choice(const std::string& key,
                                                 const std::vector<std::string>& names) const {
  if (!has(key)) return std::nullopt;
  const std::string expected = "one of: " + join_names(names);
  const YamlNode& v = scalar_or_fail(key, expected);
  check_tag(key, v, {"!!str"}, expected);
  for (const std::string& n : names) {
    if (v.scalar == n) return n;
  }
  const std::string best = v.scalar.size() > 200 ? "" : closest_match(v.scalar, names);
  fail(key, "unknown value `" + excerpt(v.scalar) + "` (" +
                (best.empty() ? "" : "did you mean `" + best + "`? ") + "expected " + expected +
                ")");
}

const Setting& MapReader::declared(const std::string& key) const {
  const Setting& row = setting(path_, key);
  if (row.required && !has(key)) {
    std::string expected;
    switch (row.kind) {
      case SettingKind::kInteger:
        expected =
            int_range(static_cast<std::int64_t>(row.min), static_cast<std::int64_t>(row.max));
        break;
      case SettingKind::kQuantity:
        expected = std::string("a ") + dimension_name(row.dimension) +
                   " with a unit: " + accepted_units(row.dimension);
        break;
      case SettingKind::kMap:
        expected = "a map of settings";
        break;
      default:
        expected = std::string("a ") + setting_kind_name(row.kind);
        break;
    }
    require(key, expected + (row.missing_hint.empty() ? "" : ": " + row.missing_hint));
  }
  return row;
}

std::optional<std::int64_t> MapReader::integer(const std::string& key) const {
  const Setting& row = declared(key);
  const auto min = static_cast<std::int64_t>(row.min), max = static_cast<std::int64_t>(row.max);
  if (has(key)) return opt_int(key, min, max);
  std::int64_t v = 0;
  if (row.default_value.empty() || !parse_int64(row.default_value, &v)) return std::nullopt;
  return v;
}

std::optional<double> MapReader::number(const std::string& key) const {
  const Setting& row = declared(key);
  if (row.kind == SettingKind::kQuantity) {
    if (has(key)) {
      return opt_quantity(key, row.dimension, row.min, row.min_open, row.max, row.quoted_in_bits);
    }
    if (row.default_value.empty()) return std::nullopt;
    return parse_quantity(row.default_value, row.dimension, nullptr);
  }
  if (has(key)) {
    if (row.zero_allowed) {
      const YamlNode* v = get(key);
      double d = 0;
      if (v->is_scalar() && !v->quoted && parse_plain_number(v->scalar, &d) && d == 0) return 0.0;
    }
    return opt_number(key, row.min, row.min_open, row.max, row.zero_allowed);
  }
  double d = 0;
  if (row.default_value.empty() || !parse_plain_number(row.default_value, &d)) {
    return std::nullopt;
  }
  return d;
}

std::optional<bool> MapReader::flag(const std::string& key) const {
  const Setting& row = declared(key);
  if (has(key)) return opt_bool(key);
  if (row.default_value.empty()) return std::nullopt;
  return row.default_value == "true";
}

std::optional<std::string> MapReader::text(const std::string& key) const {
  const Setting& row = declared(key);
  if (has(key)) {
    return row.kind == SettingKind::kChoice ? opt_choice(key, row.choices) : opt_string(key);
  }
  if (row.default_value.empty()) return std::nullopt;
  return row.default_value;
}

std::optional<MapReader> MapReader::opt_map(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const YamlNode* v = get(key);
  if (!v->is_map()) fail(key, "expected a map of settings, got " + v->describe());
  return MapReader(*v, key_path(key), entry(key)->key_mark, diag_);
}

MapReader MapReader::req_map(const std::string& key) const {
  require(key, "a map of settings");
  return *opt_map(key);
}

}  // namespace trident
