#include "core/errors.h"

#include <utility>

namespace trident {

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
  if (!where.key.empty()) out += where.key + ": ";
  out += message;
  return out;
}

ConfigError::ConfigError(SourceLocation where, const std::string& message)
    : std::runtime_error(format_location_message(where, message)),
      where_(std::move(where)),
      message_(message) {}

}  // namespace trident
