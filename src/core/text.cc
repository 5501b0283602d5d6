#include "core/text.h"

namespace trident {
namespace {

// Not std::isspace: its answer depends on the locale.
bool is_white(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

}  // namespace

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && is_white(s[b])) ++b;
  while (e > b && is_white(s[e - 1])) --e;
  return s.substr(b, e - b);
}

std::vector<std::string> split_key_path(const std::string& path) {
  std::vector<std::string> parts;
  std::string part;
  for (char c : path) {
    if (c == '.') {
      parts.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  parts.push_back(part);
  return parts;
}

}  // namespace trident
