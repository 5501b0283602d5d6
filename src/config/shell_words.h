// Reading a shell script's commands as a POSIX shell would, far enough to find a launch line:
// quoting, continuations, comments, command separators, variable assignments (also arrays)
// and parameter expansion from them and from the environment. Nothing is run: a command
// substitution or a variable without a value stays in the word, marked unresolved, for the
// caller to refuse where it matters. Every word keeps the line and column it is written at.
#ifndef TRIDENT_CONFIG_SHELL_WORDS_H_
#define TRIDENT_CONFIG_SHELL_WORDS_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace trident {

struct ShellWord {
  std::string text;
  // 1-based line and column of `text`'s first character where it is written: for a word a
  // variable held, in the variable's assignment; for a word from the environment, at the
  // `$` that expanded it.
  int line = 0;
  int column = 0;
  // The first expansion in the word that has no value here, as written ("$NODE_RANK",
  // "${ARGS[@]}", "$(hostname)"); it stays in `text` as written. "" when none.
  std::string unresolved;
  // Whether the word is nothing but unresolved unquoted expansions: in a shell it could have
  // been any number of words (arguments lost), not just one value.
  bool bare = false;
};

// Looks a variable up in the environment the script runs in; nullopt when unset.
using ShellEnvironment = std::function<std::optional<std::string>(const std::string&)>;

// This process's environment.
ShellEnvironment process_environment();

// Splits `text` into its commands' words, expanded. Blanks separate words; newlines, ;, &,
// |, && and || separate commands; redirections (> file, 2>&1) are dropped; '...' quotes
// everything, "..." all but $ and \ escapes; a backslash escapes the next character and
// before a newline joins the lines; # at the start of a word comments out the rest of its
// line. Assignments (NAME=value, NAME=(a b c), also after export/declare/local) set
// variables and are not commands. $NAME, ${NAME}, ${NAME[@]}, ${NAME[*]}, ${NAME[i]} and the
// defaults ${NAME:-x}, ${NAME-x}, ${NAME:=x}, ${NAME:+x} expand from the script's own
// assignments before the use, else from `env`; unquoted expansions are split into words at
// blanks. Throws ConfigError (file: label, line and column) on an unterminated quote or
// ${...}.
std::vector<std::vector<ShellWord>> split_shell_commands(const std::string& text,
                                                         const std::string& label,
                                                         const ShellEnvironment& env);

// Every command's words of split_shell_commands, in order.
std::vector<ShellWord> split_shell_words(const std::string& text, const std::string& label,
                                         const ShellEnvironment& env = process_environment());

}  // namespace trident

#endif  // TRIDENT_CONFIG_SHELL_WORDS_H_
