#include "config/moe_layer_freq.h"

#include <cctype>
#include <vector>

namespace trident {

bool parse_moe_layer_freq(const std::string& text, std::string* out) {
  std::string s;
  for (char c : text) {
    if (c != ' ' && c != '\'' && c != '"') s += c;
  }
  if (!s.empty() && s.find_first_not_of("0123456789") == std::string::npos) {
    *out = s;
    return true;
  }
  if (s.size() >= 2 && s.front() == '(' && s.back() == ')') s = s.substr(1, s.size() - 2);
  std::vector<std::string> items;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] != '[') return false;
    const size_t close = s.find(']', i);
    if (close == std::string::npos) return false;
    std::vector<std::string> part;
    for (size_t j = i + 1; j < close; ++j) {
      if (s[j] == '0' || s[j] == '1') {
        part.push_back(std::string(1, s[j]));
      } else if (s[j] != ',') {
        return false;
      }
    }
    i = close + 1;
    long times = 1;
    if (i < s.size() && s[i] == '*') {
      size_t end = i + 1;
      while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end]))) ++end;
      if (end == i + 1) return false;
      times = std::stol(s.substr(i + 1, end - i - 1));
      if (times > 100000) return false;
      i = end;
    }
    for (long k = 0; k < times; ++k) items.insert(items.end(), part.begin(), part.end());
    if (i < s.size()) {
      if (s[i] != '+') return false;
      ++i;
    }
  }
  if (items.empty()) return false;
  *out = "[";
  for (size_t k = 0; k < items.size(); ++k) *out += (k ? ", " : "") + items[k];
  *out += "]";
  return true;
}

}  // namespace trident
