// Splitting a shell command line into words, as a POSIX shell would (no expansion), keeping
// the line each word starts on (for messages about launch lines).
#ifndef TRIDENT_CONFIG_SHELL_WORDS_H_
#define TRIDENT_CONFIG_SHELL_WORDS_H_

#include <string>
#include <vector>

namespace trident {

struct ShellWord {
  std::string text;
  int line = 0;  // 1-based line of `text`'s first character
};

// Splits `text`: blanks separate words; '...' and "..." quote (no escapes inside); a
// backslash escapes the next character, and before a newline joins the lines; # at the start
// of a word comments out the rest of its line. Throws ConfigError (file: label, the line)
// on an unterminated quote.
std::vector<ShellWord> split_shell_words(const std::string& text, const std::string& label);

}  // namespace trident

#endif  // TRIDENT_CONFIG_SHELL_WORDS_H_
