#include "config/shell_words.h"

#include <cctype>

#include "core/errors.h"

namespace trident {

std::vector<ShellWord> split_shell_words(const std::string& text, const std::string& label) {
  std::vector<ShellWord> words;
  ShellWord word;
  bool in_word = false;
  int line = 1;
  const auto start = [&] {
    if (!in_word) word.line = line;
    in_word = true;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      if (text[i + 1] == '\n') {
        ++i;  // line continuation
        ++line;
        continue;
      }
      start();
      word.text += text[++i];
    } else if (c == '\'' || c == '"') {
      const size_t end = text.find(c, i + 1);
      if (end == std::string::npos) {
        SourceLocation where;
        where.file = label;
        where.line = line;
        throw ConfigError(where, std::string("unterminated ") + c + " quote in the launch line");
      }
      start();
      const std::string quoted = text.substr(i + 1, end - i - 1);
      for (char q : quoted) line += q == '\n';
      word.text += quoted;
      i = end;
    } else if (c == '#' && !in_word) {
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;  // a comment to the line's end
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(word);
      word = ShellWord{};
      in_word = false;
      if (c == '\n') ++line;
    } else {
      start();
      word.text += c;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

}  // namespace trident
