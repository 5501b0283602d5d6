#include "core/units.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/text.h"

namespace trident {
namespace {

struct UnitDef {
  const char* symbol;
  Dimension dim;
  double scale;  // SI base units per one of this unit
};

constexpr double kKi = 1024.0;

// Every accepted spelling. Case matters: `b` is a bit, `B` a byte.
const UnitDef kUnits[] = {
    // time
    {"s", Dimension::kTime, 1},
    {"ms", Dimension::kTime, 1e-3},
    {"us", Dimension::kTime, 1e-6},
    {"\xC2\xB5s", Dimension::kTime, 1e-6},  // micro sign
    {"\xCE\xBCs", Dimension::kTime, 1e-6},  // Greek mu
    {"ns", Dimension::kTime, 1e-9},
    // long spans: failure rates and restarts (cluster.reliability)
    {"min", Dimension::kTime, 60},
    {"h", Dimension::kTime, 3600},
    // bytes, decimal and binary prefixes
    {"B", Dimension::kBytes, 1},
    {"KB", Dimension::kBytes, 1e3},
    {"kB", Dimension::kBytes, 1e3},
    {"MB", Dimension::kBytes, 1e6},
    {"GB", Dimension::kBytes, 1e9},
    {"TB", Dimension::kBytes, 1e12},
    {"PB", Dimension::kBytes, 1e15},
    {"KiB", Dimension::kBytes, kKi},
    {"MiB", Dimension::kBytes, kKi* kKi},
    {"GiB", Dimension::kBytes, kKi* kKi* kKi},
    {"TiB", Dimension::kBytes, kKi* kKi* kKi* kKi},
    {"PiB", Dimension::kBytes, kKi* kKi* kKi* kKi* kKi},
    // bandwidth in bytes per second
    {"B/s", Dimension::kBandwidth, 1},
    {"KB/s", Dimension::kBandwidth, 1e3},
    {"kB/s", Dimension::kBandwidth, 1e3},
    {"MB/s", Dimension::kBandwidth, 1e6},
    {"GB/s", Dimension::kBandwidth, 1e9},
    {"TB/s", Dimension::kBandwidth, 1e12},
    {"PB/s", Dimension::kBandwidth, 1e15},
    {"KiB/s", Dimension::kBandwidth, kKi},
    {"MiB/s", Dimension::kBandwidth, kKi* kKi},
    {"GiB/s", Dimension::kBandwidth, kKi* kKi* kKi},
    {"TiB/s", Dimension::kBandwidth, kKi* kKi* kKi* kKi},
    {"Bps", Dimension::kBandwidth, 1},
    {"KBps", Dimension::kBandwidth, 1e3},
    {"MBps", Dimension::kBandwidth, 1e6},
    {"GBps", Dimension::kBandwidth, 1e9},
    {"TBps", Dimension::kBandwidth, 1e12},
    // bandwidth in bits per second: divided by 8
    {"bps", Dimension::kBandwidth, 1.0 / 8},
    {"Kbps", Dimension::kBandwidth, 1e3 / 8},
    {"kbps", Dimension::kBandwidth, 1e3 / 8},
    {"Mbps", Dimension::kBandwidth, 1e6 / 8},
    {"Gbps", Dimension::kBandwidth, 1e9 / 8},
    {"Tbps", Dimension::kBandwidth, 1e12 / 8},
    {"Pbps", Dimension::kBandwidth, 1e15 / 8},
    {"b/s", Dimension::kBandwidth, 1.0 / 8},
    {"Kb/s", Dimension::kBandwidth, 1e3 / 8},
    {"Mb/s", Dimension::kBandwidth, 1e6 / 8},
    {"Gb/s", Dimension::kBandwidth, 1e9 / 8},
    {"Tb/s", Dimension::kBandwidth, 1e12 / 8},
    {"Gbit/s", Dimension::kBandwidth, 1e9 / 8},
    {"Tbit/s", Dimension::kBandwidth, 1e12 / 8},
    // FLOP counts
    {"FLOP", Dimension::kFlops, 1},
    {"KFLOP", Dimension::kFlops, 1e3},
    {"MFLOP", Dimension::kFlops, 1e6},
    {"GFLOP", Dimension::kFlops, 1e9},
    {"TFLOP", Dimension::kFlops, 1e12},
    {"PFLOP", Dimension::kFlops, 1e15},
    {"EFLOP", Dimension::kFlops, 1e18},
    // FLOP rates
    {"FLOPS", Dimension::kFlopRate, 1},
    {"KFLOPS", Dimension::kFlopRate, 1e3},
    {"MFLOPS", Dimension::kFlopRate, 1e6},
    {"GFLOPS", Dimension::kFlopRate, 1e9},
    {"TFLOPS", Dimension::kFlopRate, 1e12},
    {"PFLOPS", Dimension::kFlopRate, 1e15},
    {"FLOP/s", Dimension::kFlopRate, 1},
    {"KFLOP/s", Dimension::kFlopRate, 1e3},
    {"MFLOP/s", Dimension::kFlopRate, 1e6},
    {"GFLOP/s", Dimension::kFlopRate, 1e9},
    {"TFLOP/s", Dimension::kFlopRate, 1e12},
    {"PFLOP/s", Dimension::kFlopRate, 1e15},
    // clock rates
    {"Hz", Dimension::kFrequency, 1},
    {"kHz", Dimension::kFrequency, 1e3},
    {"MHz", Dimension::kFrequency, 1e6},
    {"GHz", Dimension::kFrequency, 1e9},
    // power
    {"W", Dimension::kPower, 1},
    {"kW", Dimension::kPower, 1e3},
};

const UnitDef* find_unit(const std::string& symbol) {
  for (const UnitDef& u : kUnits) {
    if (symbol == u.symbol) return &u;
  }
  return nullptr;
}

bool iequal(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// Returns " (did you mean `X`?)" for units equal to `symbol` up to case, or "".
std::string case_hint(const std::string& symbol) {
  std::vector<std::string> hits;
  for (const UnitDef& u : kUnits) {
    if (iequal(symbol, u.symbol)) hits.emplace_back(u.symbol);
  }
  if (hits.empty()) return "";
  std::string out = "did you mean `" + hits[0] + "`";
  for (size_t i = 1; i < hits.size(); ++i) out += " or `" + hits[i] + "`";
  return out + "?";
}

bool is_space(char c) { return c == ' ' || c == '\t'; }

// Length of the decimal number at the start of `s` ([+-]digits[.digits][e[+-]digits]),
// or 0 when there is none.
size_t scan_number(const std::string& s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  size_t digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  }
  if (digits == 0) return 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    size_t exp_digits = 0;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j, ++exp_digits;
    if (exp_digits > 0) i = j;
  }
  return i;
}

std::string expected(Dimension dim) {
  return std::string("expected ") + "a " + dimension_name(dim) + ": " + accepted_units(dim);
}

bool fail(std::string* error, const std::string& message) {
  if (error != nullptr) *error = message;
  return false;
}

// Formats `v` with up to 4 significant digits, no exponent for ordinary magnitudes.
std::string short_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

const char* dimension_name(Dimension dim) {
  switch (dim) {
    case Dimension::kTime:
      return "time";
    case Dimension::kBytes:
      return "size";
    case Dimension::kBandwidth:
      return "bandwidth";
    case Dimension::kFlops:
      return "FLOP count";
    case Dimension::kFlopRate:
      return "FLOP rate";
    case Dimension::kFrequency:
      return "frequency";
    case Dimension::kPower:
      return "power";
  }
  return "quantity";
}

const char* accepted_units(Dimension dim) {
  switch (dim) {
    case Dimension::kTime:
      return "s, ms, us, ns";
    case Dimension::kBytes:
      return "B, KB, MB, GB, TB, KiB, MiB, GiB, TiB";
    case Dimension::kBandwidth:
      return "B/s, KB/s, MB/s, GB/s, TB/s, PB/s (or GBps), bps, Kbps, Mbps, Gbps, Tbps (bits)";
    case Dimension::kFlops:
      return "FLOP, KFLOP, MFLOP, GFLOP, TFLOP, PFLOP";
    case Dimension::kFlopRate:
      return "FLOPS, KFLOPS, MFLOPS, GFLOPS, TFLOPS, PFLOPS (or TFLOP/s)";
    case Dimension::kFrequency:
      return "Hz, kHz, MHz, GHz";
    case Dimension::kPower:
      return "W, kW";
  }
  return "";
}

std::optional<double> parse_quantity(const std::string& raw, Dimension dim, std::string* error) {
  const std::string text = trim(raw);
  if (text.empty()) {
    fail(error, "empty value (" + expected(dim) + ")");
    return std::nullopt;
  }
  const size_t num_len = scan_number(text);
  if (num_len == 0) {
    fail(error, "`" + text + "` does not start with a number (" + expected(dim) + ")");
    return std::nullopt;
  }
  const std::string number = text.substr(0, num_len);
  size_t pos = num_len;
  while (pos < text.size() && is_space(text[pos])) ++pos;
  const std::string rest = text.substr(pos);
  if (rest.empty()) {
    fail(error, "`" + text + "` has no unit (" + expected(dim) + ")");
    return std::nullopt;
  }
  // The unit is the first whitespace-free token; anything after it is junk.
  size_t unit_end = 0;
  while (unit_end < rest.size() && !std::isspace(static_cast<unsigned char>(rest[unit_end]))) {
    ++unit_end;
  }
  const std::string symbol = rest.substr(0, unit_end);
  const UnitDef* unit = find_unit(symbol);
  if (unit == nullptr) {
    std::string hint = case_hint(symbol);
    fail(error, "unknown unit `" + symbol + "` in `" + text + "` (" +
                    (hint.empty() ? "" : hint + " ") + expected(dim) + ")");
    return std::nullopt;
  }
  if (unit_end < rest.size()) {
    fail(error, "unexpected text `" + trim(rest.substr(unit_end)) + "` after `" + number + " " +
                    symbol + "` (" + expected(dim) + ")");
    return std::nullopt;
  }
  if (unit->dim != dim) {
    fail(error, "`" + text + "` is a " + dimension_name(unit->dim) + ", expected a " +
                    dimension_name(dim) + " (" + accepted_units(dim) + ")");
    return std::nullopt;
  }
  const double mantissa = std::strtod(number.c_str(), nullptr);
  if (!std::isfinite(mantissa)) {
    fail(error, "`" + text + "` is out of range (" + expected(dim) + ")");
    return std::nullopt;
  }
  if (mantissa < 0) {
    fail(error, "`" + text + "` is negative (expected a non-negative " + dimension_name(dim) + ")");
    return std::nullopt;
  }
  const double value = mantissa * unit->scale;
  if (!std::isfinite(value)) {
    fail(error, "`" + text + "` is out of range (" + expected(dim) + ")");
    return std::nullopt;
  }
  return value + 0.0;  // turns -0 into 0
}

std::string format_quantity(double v, Dimension dim) {
  struct Step {
    double scale;
    const char* symbol;
  };
  static const Step kTimeSteps[] = {{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}};
  static const Step kByteSteps[] = {{1e15, "PB"}, {1e12, "TB"}, {1e9, "GB"},
                                    {1e6, "MB"},  {1e3, "KB"},  {1, "B"}};
  static const Step kBinarySteps[] = {
      {kKi * kKi * kKi * kKi, "TiB"}, {kKi * kKi * kKi, "GiB"}, {kKi * kKi, "MiB"}, {kKi, "KiB"}};
  static const Step kBandwidthSteps[] = {
      {1e12, "TB/s"}, {1e9, "GB/s"}, {1e6, "MB/s"}, {1e3, "KB/s"}, {1, "B/s"}};
  static const Step kFlopSteps[] = {{1e18, "EFLOP"}, {1e15, "PFLOP"}, {1e12, "TFLOP"},
                                    {1e9, "GFLOP"},  {1e6, "MFLOP"},  {1e3, "KFLOP"},
                                    {1, "FLOP"}};
  static const Step kRateSteps[] = {{1e15, "PFLOPS"}, {1e12, "TFLOPS"}, {1e9, "GFLOPS"},
                                    {1e6, "MFLOPS"},  {1e3, "KFLOPS"},  {1, "FLOPS"}};
  static const Step kFrequencySteps[] = {{1e9, "GHz"}, {1e6, "MHz"}, {1e3, "kHz"}, {1, "Hz"}};
  static const Step kPowerSteps[] = {{1e3, "kW"}, {1, "W"}};
  if (v == 0) {
    static const char* const kBase[] = {"s", "B", "B/s", "FLOP", "FLOPS", "Hz", "W"};
    return std::string("0 ") + kBase[static_cast<int>(dim)];
  }
  const Step* steps = nullptr;
  size_t count = 0;
  switch (dim) {
    case Dimension::kTime:
      steps = kTimeSteps, count = 4;
      break;
    case Dimension::kBytes:
      // A size that is a whole number of binary units but not of decimal ones prints in
      // binary units: 80 GiB, not 85.9 GB; 2e9 stays 2 GB.
      for (const Step& s : kByteSteps) {
        if (std::fabs(v) >= s.scale) {
          if (std::fmod(std::fabs(v), s.scale) == 0)
            return short_number(v / s.scale) + " " + s.symbol;
          break;
        }
      }
      for (const Step& s : kBinarySteps) {
        if (std::fabs(v) >= s.scale) {
          if (std::fmod(std::fabs(v), s.scale) == 0)
            return short_number(v / s.scale) + " " + s.symbol;
          break;
        }
      }
      steps = kByteSteps, count = 6;
      break;
    case Dimension::kBandwidth:
      steps = kBandwidthSteps, count = 5;
      break;
    case Dimension::kFlops:
      steps = kFlopSteps, count = 7;
      break;
    case Dimension::kFlopRate:
      steps = kRateSteps, count = 6;
      break;
    case Dimension::kFrequency:
      steps = kFrequencySteps, count = 4;
      break;
    case Dimension::kPower:
      steps = kPowerSteps, count = 2;
      break;
  }
  if (steps == nullptr || count == 0) return short_number(v);
  for (size_t i = 0; i < count; ++i) {
    if (std::fabs(v) >= steps[i].scale) {
      return short_number(v / steps[i].scale) + " " + steps[i].symbol;
    }
  }
  const Step& last = steps[count - 1];
  return short_number(v / last.scale) + " " + last.symbol;
}

}  // namespace trident
