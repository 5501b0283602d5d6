// Text from users' files (model and cluster names, paths) made safe for the formats that need
// valid UTF-8: JSON (nlohmann refuses invalid bytes), XML (SVG) and CSV.
#ifndef TRIDENT_CORE_UTF8_H_
#define TRIDENT_CORE_UTF8_H_

#include <string>

namespace trident {

// Returns `text` with every byte sequence that is not valid UTF-8 (stray continuation bytes,
// overlong forms, surrogates, code points past U+10FFFF, truncated sequences) and every
// control character other than tab, line feed and carriage return replaced by U+FFFD.
// Valid text without control characters is returned unchanged.
std::string sanitize_utf8(const std::string& text);

}  // namespace trident

#endif  // TRIDENT_CORE_UTF8_H_
