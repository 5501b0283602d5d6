// Lexing a shell script into commands of words as written, each word in parts (quoted text,
// parameter expansions, expansions trident cannot perform), every character with its line
// and column. config/shell_words.h expands them; nothing else should need this header.
#ifndef TRIDENT_CONFIG_SHELL_LEXER_H_
#define TRIDENT_CONFIG_SHELL_LEXER_H_

#include <string>
#include <vector>

namespace trident::shell {

struct Pos {
  int line = 0;
  int column = 0;
};

// One part of a word as written.
struct Part {
  enum class Kind { kText, kParameter, kOpaque };
  Kind kind = Kind::kText;
  bool quoted = false;     // inside quotes
  Pos at;                  // where the part starts
  std::string text;        // kText: the characters; otherwise the expansion as written
  std::vector<Pos> pos;    // kText: each character's position
  std::string name;        // kParameter: NAME
  std::string index;       // kParameter: "", "@", "*" or a number
  std::string op;          // kParameter: "", "-", ":-", "=", ":=", "+", ":+", "?", ":?"
  std::vector<Part> word;  // kParameter: the word after `op`
};
using RawWord = std::vector<Part>;

// One word of a command, or an array assignment NAME=(...) (NAME+ to append).
struct Entry {
  RawWord word;
  bool array = false;
  std::string array_name;
  std::vector<RawWord> elements;
};

bool is_name_start(char c);
bool is_name_char(char c);
bool is_blank(char c);

// Splits `text` into commands (config/shell_words.h says which syntax): separators,
// comments, continuations and redirections are dropped; `$(...)`, backquotes, positional
// and special parameters and ${...} forms other than the ones expanded are kOpaque parts.
// Throws ConfigError (file: label, line and column) on an unterminated quote, ${, $( or (.
std::vector<std::vector<Entry>> lex_shell_script(const std::string& text, const std::string& label);

// Whether `w` is NAME=... (or NAME+=...); sets the name (with a trailing + to append) and
// the parts after '='.
bool split_assignment(const RawWord& w, std::string* name, RawWord* rest);

// The word's text when it is one unquoted literal ("export"), else "".
std::string literal_word(const Entry& e);

}  // namespace trident::shell

#endif  // TRIDENT_CONFIG_SHELL_LEXER_H_
