#include "core/errors.h"

#include <utility>

namespace trident {
namespace {

// Appends `c` to `out`, escaping control characters.
void append_printable(char c, std::string* out) {
  const unsigned char u = static_cast<unsigned char>(c);
  if (c == '\n') {
    *out += "\\n";
  } else if (c == '\r') {
    *out += "\\r";
  } else if (c == '\t') {
    *out += "\\t";
  } else if (u < 0x20 || u == 0x7f) {
    static const char kHex[] = "0123456789abcdef";
    *out += "\\x";
    *out += kHex[u >> 4];
    *out += kHex[u & 15];
  } else {
    *out += c;
  }
}

}  // namespace

std::string excerpt(const std::string& text, std::size_t max_chars) {
  std::string out;
  const bool cut = text.size() > max_chars;
  std::size_t n = cut ? max_chars : text.size();
  // Do not split a UTF-8 sequence.
  while (cut && n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  for (std::size_t i = 0; i < n; ++i) append_printable(text[i], &out);
  if (cut) out += "...";
  return out;
}

std::string format_location_message(const SourceLocation& where, const std::string& message) {
  std::string out;
  if (!where.file.empty()) {
    out += where.file;
    if (where.line > 0) {
      out += ":" + std::to_string(where.line);
      if (where.column > 0) out += ":" + std::to_string(where.column);
    }
    out += ": ";
  }
  if (!where.key.empty()) out += excerpt(where.key, 200) + ": ";
  out += message;
  std::string line;
  line.reserve(out.size());
  for (char c : out) append_printable(c, &line);
  return line;
}

ConfigError::ConfigError(SourceLocation where, const std::string& message)
    : std::runtime_error(format_location_message(where, message)),
      where_(std::move(where)),
      message_(message) {}

}  // namespace trident
