#include "cli/sweep_points.h"

#include <cctype>
#include <cstdlib>
#include <limits>

#include "config/schema.h"
#include "core/errors.h"
#include "core/text.h"

namespace trident {
namespace {

ConfigError error_at(const std::string& label, const std::string& key, const std::string& what) {
  SourceLocation where;
  where.file = label;
  where.key = key;
  return ConfigError(where, what);
}

// A positive integer written in decimal, or -1.
long long positive_integer(const std::string& s) {
  if (s.empty() || s.size() > 18) return -1;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
  }
  const long long v = std::strtoll(s.c_str(), nullptr, 10);
  return v > 0 ? v : -1;
}

}  // namespace

std::vector<std::string> split_top_level(const std::string& text) {
  std::vector<std::string> out;
  if (trim(text).empty()) return out;
  int depth = 0;
  char quote = 0;
  std::string piece;
  for (char c : text) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      out.push_back(trim(piece));
      piece.clear();
      continue;
    }
    piece += c;
  }
  out.push_back(trim(piece));
  return out;
}

std::vector<std::string> expand_doubling(const std::vector<std::string>& values,
                                         const std::string& label) {
  std::vector<std::string> out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] != "...") {
      out.push_back(values[i]);
      continue;
    }
    if (i == 0 || i + 1 == values.size() || out.empty() || values[i + 1] == "...") {
      throw error_at(label, "",
                     "'...' needs a value on each side, e.g. 1,2,4,...,128 (a doubling range)");
    }
    const long long from = positive_integer(out.back());
    const long long to = positive_integer(values[i + 1]);
    if (from < 0 || to <= from) {
      throw error_at(label, "",
                     "'...' doubles from one positive integer up to a larger one, e.g. "
                     "1,2,4,...,128; got '" +
                         out.back() + ",...," + values[i + 1] + "'");
    }
    long long v = from;
    while (v < to && v <= std::numeric_limits<long long>::max() / 2) v *= 2;
    if (v != to) {
      throw error_at(label, "",
                     "'" + out.back() + ",...," + values[i + 1] + "': " + values[i + 1] +
                         " is not " + out.back() + " times a power of two (a doubling range)");
    }
    // Values strictly between the neighbours; the right neighbour is pushed next round.
    for (long long x = from * 2; x < to; x *= 2) out.push_back(std::to_string(x));
  }
  return out;
}

SweepAxis parse_vary(const std::string& text) {
  const std::string label = "--vary " + text;
  const size_t eq = text.find('=');
  if (eq == std::string::npos) {
    throw error_at(label, "", "expected key=v1,v2,..., e.g. --vary plan.num_microbatches=1,2,4");
  }
  SweepAxis axis;
  axis.key = trim(text.substr(0, eq));
  if (axis.key.empty()) {
    throw error_at(label, "",
                   "empty key (expected key=v1,v2,..., e.g. --vary plan.tensor_parallel=2,4)");
  }
  const std::string error = schema_path_error(axis.key);
  if (!error.empty()) throw error_at(label, axis.key, error);
  const std::vector<std::string> values = split_top_level(text.substr(eq + 1));
  for (const std::string& v : values) {
    if (v.empty()) throw error_at(label, axis.key, "empty value in the list");
  }
  if (values.empty()) throw error_at(label, axis.key, "no values (expected key=v1,v2,...)");
  axis.values = expand_doubling(values, label);
  return axis;
}

std::vector<SweepAxis> combine_axes(const std::vector<SweepAxis>& scenario_axes,
                                    const std::vector<SweepAxis>& vary_axes) {
  std::vector<SweepAxis> axes;
  for (const SweepAxis& a : scenario_axes) {
    axes.push_back({a.key, expand_doubling(a.values, "sweep." + a.key)});
  }
  const size_t from_scenario = axes.size();
  for (size_t i = 0; i < vary_axes.size(); ++i) {
    const SweepAxis& v = vary_axes[i];
    for (size_t j = 0; j < i; ++j) {
      if (vary_axes[j].key == v.key) {
        throw error_at("--vary " + v.key, v.key, "varied twice; give its values in one --vary");
      }
    }
    bool replaced = false;
    for (size_t k = 0; k < from_scenario; ++k) {
      if (axes[k].key == v.key) {
        axes[k] = v;
        replaced = true;
      }
    }
    if (!replaced) axes.push_back(v);
  }
  return axes;
}

long long count_points(const std::vector<SweepAxis>& axes) {
  if (axes.empty()) return 0;
  long long total = 1;
  for (const SweepAxis& a : axes) {
    total *= static_cast<long long>(a.values.size());
    if (total > kMaxSweepPoints) return kMaxSweepPoints + 1;
  }
  return total;
}

std::vector<SweepPoint> expand_points(const std::vector<SweepAxis>& axes) {
  std::vector<SweepPoint> points;
  if (axes.empty()) return points;
  if (count_points(axes) > kMaxSweepPoints) {
    std::string sizes;
    for (const SweepAxis& a : axes) {
      sizes += (sizes.empty() ? "" : " x ") + std::to_string(a.values.size());
    }
    SourceLocation where;
    where.file = "--vary";
    throw ConfigError(where, "the sweep has more than the limit of " +
                                 std::to_string(kMaxSweepPoints) + " points (axes of " + sizes +
                                 " values); split it into several sweeps");
  }
  const size_t total = static_cast<size_t>(count_points(axes));
  points.reserve(total);
  for (size_t i = 0; i < total; ++i) {
    SweepPoint p;
    p.index = static_cast<int>(i);
    p.values.resize(axes.size());
    size_t rest = i;
    for (size_t k = axes.size(); k-- > 0;) {
      p.values[k] = axes[k].values[rest % axes[k].values.size()];
      rest /= axes[k].values.size();
    }
    points.push_back(std::move(p));
  }
  return points;
}

Shard parse_shard(const std::string& text) {
  const size_t slash = text.find('/');
  const std::string expected = "expected i/N with 0 <= i < N, e.g. --shard 0/4";
  if (slash == std::string::npos) throw error_at("--shard " + text, "", expected);
  const long long n = positive_integer(text.substr(slash + 1));
  const std::string i_text = text.substr(0, slash);
  const long long i = i_text == "0" ? 0 : positive_integer(i_text);
  if (n < 1 || i < 0 || i >= n || n > std::numeric_limits<int>::max()) {
    throw error_at("--shard " + text, "", expected);
  }
  return Shard{static_cast<int>(i), static_cast<int>(n)};
}

std::vector<SweepPoint> select_shard(const std::vector<SweepPoint>& points, const Shard& shard) {
  std::vector<SweepPoint> out;
  for (const SweepPoint& p : points) {
    if (p.index % shard.count == shard.index) out.push_back(p);
  }
  return out;
}

std::vector<std::string> point_overrides(const std::vector<SweepAxis>& axes,
                                         const SweepPoint& point) {
  std::vector<std::string> out;
  for (size_t k = 0; k < axes.size(); ++k) out.push_back(axes[k].key + "=" + point.values[k]);
  return out;
}

}  // namespace trident
