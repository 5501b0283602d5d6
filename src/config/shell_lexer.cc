#include "config/shell_lexer.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "core/errors.h"

namespace trident::shell {

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

namespace {

class Lexer {
 public:
  Lexer(const std::string& text, const std::string& label) : s_(text), label_(label) {
    Pos p{1, 1};
    for (char c : s_) {
      at_.push_back(p);
      p = c == '\n' ? Pos{p.line + 1, 1} : Pos{p.line, p.column + 1};
    }
    at_.push_back(p);
  }

  std::vector<std::vector<Entry>> run() {
    std::vector<Entry> command;
    while (i_ < s_.size()) {
      const char c = peek();
      if (c == '\\' && peek(1) == '\n') {
        i_ += 2;
      } else if (is_blank(c)) {
        ++i_;
      } else if (c == '\n' || c == ';' || c == '&' || c == '|') {
        end_command(&command);
        ++i_;
      } else if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else if (c == '<' || c == '>') {
        skip_redirection();
      } else {
        Entry e;
        e.word = lex_word(Mode::kCommand);
        std::string name;
        RawWord rest;
        if ((peek() == '<' || peek() == '>') && is_number(e.word)) {
          skip_redirection();  // 2>&1, 2> file: the number is the descriptor
          continue;
        }
        if (peek() == '(' && split_assignment(e.word, &name, &rest) && rest.empty()) {
          e.array = true;
          e.array_name = name;
          e.elements = lex_array();
        }
        command.push_back(std::move(e));
      }
    }
    end_command(&command);
    return std::move(out_);
  }

 private:
  char peek(std::size_t k = 0) const { return i_ + k < s_.size() ? s_[i_ + k] : '\0'; }

  [[noreturn]] void fail(Pos p, const std::string& what) const {
    throw ConfigError(SourceLocation{label_, p.line, p.column, ""}, what);
  }

  // Parentheses are word characters (as in --moe-layer-freq ([0]*3+[1]*58), which a shell
  // would want quoted) but after NAME= (an array) and, inside an array, a closing one.
  enum class Mode { kCommand, kArray, kBraces };

  static bool word_end(char c) {
    return c == '\0' || is_blank(c) || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' ||
           c == '>';
  }

  static bool ends_word(const RawWord& w, char c, Mode mode) {
    if (mode == Mode::kBraces) return c == '}';
    if (word_end(c)) return true;
    if (mode == Mode::kArray) return c == ')' || c == '(';
    std::string name;
    RawWord rest;
    return c == '(' && split_assignment(w, &name, &rest) && rest.empty();
  }

  static void add_char(RawWord* w, char c, Pos p, bool quoted) {
    if (w->empty() || w->back().kind != Part::Kind::kText || w->back().quoted != quoted) {
      Part part;
      part.quoted = quoted;
      part.at = p;
      w->push_back(part);
    }
    w->back().text += c;
    w->back().pos.push_back(p);
  }

  // A word up to an unquoted separator (or, in ${...}, up to its closing brace).
  RawWord lex_word(Mode mode) {
    RawWord w;
    while (i_ < s_.size()) {
      const char c = peek();
      if (c == '\\' && peek(1) == '\n') {
        i_ += 2;
      } else if (ends_word(w, c, mode)) {
        break;
      } else if (c == '\\') {
        if (i_ + 1 < s_.size()) add_char(&w, s_[i_ + 1], at_[i_ + 1], true);
        i_ = std::min(i_ + 2, s_.size());
      } else if (c == '\'') {
        lex_single(&w);
      } else if (c == '"') {
        lex_double(&w);
      } else if (c == '$') {
        lex_dollar(&w, false);
      } else if (c == '`') {
        lex_opaque(&w, false, i_, closing('`', i_ + 1, "`") + 1);
      } else {
        add_char(&w, c, at_[i_], false);
        ++i_;
      }
    }
    return w;
  }

  void open_quote(RawWord* w) {
    Part part;  // so that '' and "" are words
    part.quoted = true;
    part.at = at_[i_];
    w->push_back(part);
  }

  void lex_single(RawWord* w) {
    const std::size_t end = closing('\'', i_ + 1, "'");
    open_quote(w);
    for (++i_; i_ < end; ++i_) add_char(w, s_[i_], at_[i_], true);
    ++i_;
  }

  void lex_double(RawWord* w) {
    const Pos start = at_[i_];
    open_quote(w);
    for (++i_;;) {
      const char c = peek();
      if (i_ >= s_.size()) fail(start, "unterminated \" quote in the launch line");
      if (c == '"') break;
      if (c == '\\' && (peek(1) == '\n')) {
        i_ += 2;
      } else if (c == '\\' &&
                 (peek(1) == '$' || peek(1) == '`' || peek(1) == '"' || peek(1) == '\\')) {
        add_char(w, s_[i_ + 1], at_[i_ + 1], true);
        i_ += 2;
      } else if (c == '$') {
        lex_dollar(w, true);
      } else if (c == '`') {
        lex_opaque(w, true, i_, closing('`', i_ + 1, "`") + 1);
      } else {
        add_char(w, c, at_[i_], true);
        ++i_;
      }
    }
    ++i_;
  }

  // The index of the next `c` from `from`; throws naming `what` when there is none.
  std::size_t closing(char c, std::size_t from, const char* what) const {
    const std::size_t end = s_.find(c, from);
    if (end == std::string::npos) {
      fail(at_[i_], std::string("unterminated ") + what + " quote in the launch line");
    }
    return end;
  }

  // The index just past the bracket that closes the one before `from` (`open`/`close`),
  // skipping quoted text.
  std::size_t matching(char open, char close, std::size_t from, const char* what) const {
    int depth = 1;
    for (std::size_t k = from; k < s_.size(); ++k) {
      const char c = s_[k];
      if (c == '\\') {
        ++k;
      } else if (c == '\'' || c == '"') {
        const std::size_t end = s_.find(c, k + 1);
        if (end == std::string::npos) break;
        k = end;
      } else if (c == open) {
        ++depth;
      } else if (c == close && --depth == 0) {
        return k + 1;
      }
    }
    fail(at_[i_], std::string("unterminated ") + what + " in the launch line");
  }

  // s_[from, end) as an expansion trident cannot perform; moves past it.
  void lex_opaque(RawWord* w, bool quoted, std::size_t from, std::size_t end) {
    Part part;
    part.kind = Part::Kind::kOpaque;
    part.quoted = quoted;
    part.at = at_[from];
    part.text = s_.substr(from, end - from);
    w->push_back(part);
    i_ = end;
  }

  void lex_dollar(RawWord* w, bool quoted) {
    const std::size_t from = i_;
    const char next = peek(1);
    if (next == '(') {
      lex_opaque(w, quoted, from, matching('(', ')', i_ + 2, "$("));
    } else if (next == '\'' && !quoted) {
      ++i_;  // $'...': quoted as '...' (escapes kept as written)
      lex_single(w);
    } else if (next == '{') {
      lex_braces(w, quoted);
    } else if (is_name_start(next)) {
      Part part;
      part.kind = Part::Kind::kParameter;
      part.quoted = quoted;
      part.at = at_[from];
      for (i_ += 1; is_name_char(peek()); ++i_) part.name += peek();
      part.text = s_.substr(from, i_ - from);
      w->push_back(part);
    } else if (next != '\0' && std::string("0123456789@*#?$!-").find(next) != std::string::npos) {
      lex_opaque(w, quoted, from, from + 2);  // positional and special parameters
    } else {
      add_char(w, '$', at_[i_], quoted);
      ++i_;
    }
  }

  // ${NAME}, ${NAME[i]}, ${NAME<op>word}; any other form is kept opaque.
  void lex_braces(RawWord* w, bool quoted) {
    const std::size_t from = i_;
    // ${A:-${B:-...}} is read recursively, each level scanning to its brace.
    if (++depth_ > kMaxNesting) {
      fail(at_[i_],
           "${...} nested more than " + std::to_string(kMaxNesting) + " deep in the launch line");
    }
    struct Leave {
      int* depth;
      ~Leave() { --*depth; }
    } leave{&depth_};
    const std::size_t end = matching('{', '}', i_ + 2, "${");
    Part part;
    part.kind = Part::Kind::kParameter;
    part.quoted = quoted;
    part.at = at_[from];
    i_ += 2;
    while (is_name_char(peek()) && i_ < end) part.name += s_[i_++];
    if (part.name.empty() || !is_name_start(part.name[0])) {
      return lex_opaque(w, quoted, from, end);
    }
    if (peek() == '[') {
      const std::size_t close = s_.find(']', i_);
      if (close == std::string::npos || close >= end) return lex_opaque(w, quoted, from, end);
      part.index = s_.substr(i_ + 1, close - i_ - 1);
      const bool number =
          !part.index.empty() && part.index.find_first_not_of("0123456789") == std::string::npos;
      if (part.index != "@" && part.index != "*" && !number) {
        return lex_opaque(w, quoted, from, end);
      }
      i_ = close + 1;
    }
    if (peek() != '}') {
      std::size_t length = peek() == ':' ? 2 : 1;
      const char op = s_[i_ + length - 1];
      if (std::string("-=+?").find(op) == std::string::npos) {
        return lex_opaque(w, quoted, from, end);
      }
      part.op = s_.substr(i_, length);
      i_ += length;
      part.word = lex_word(Mode::kBraces);
    }
    i_ = end;
    part.text = s_.substr(from, end - from);
    w->push_back(std::move(part));
  }

  std::vector<RawWord> lex_array() {
    const Pos open = at_[i_];
    std::vector<RawWord> elements;
    for (++i_;;) {
      const char c = peek();
      if (i_ >= s_.size()) fail(open, "unterminated ( of an array in the launch line");
      if (c == ')') break;
      if (c == '\\' && peek(1) == '\n') {
        i_ += 2;
      } else if (is_blank(c) || c == '\n') {
        ++i_;
      } else if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else if (word_end(c) || c == '(') {
        ++i_;  // ; & | < > ( inside an array: not words
      } else {
        elements.push_back(lex_word(Mode::kArray));
      }
    }
    ++i_;
    return elements;
  }

  void skip_redirection() {
    while (peek() == '<' || peek() == '>' || peek() == '|') ++i_;
    if (peek() == '&') {
      ++i_;
      if (std::isdigit(static_cast<unsigned char>(peek())) || peek() == '-') {
        while (std::isdigit(static_cast<unsigned char>(peek())) || peek() == '-') ++i_;
        return;
      }
    }
    while (is_blank(peek())) ++i_;
    if (!word_end(peek())) lex_word(Mode::kCommand);  // the file: not a word of the command
  }

  static bool is_number(const RawWord& w) {
    return w.size() == 1 && w[0].kind == Part::Kind::kText && !w[0].quoted && !w[0].text.empty() &&
           w[0].text.find_first_not_of("0123456789") == std::string::npos;
  }

  void end_command(std::vector<Entry>* command) {
    if (!command->empty()) out_.push_back(std::move(*command));
    command->clear();
  }

  const std::string& s_;
  const std::string& label_;
  std::vector<Pos> at_;  // the line and column of each character of s_ (and of its end)
  std::size_t i_ = 0;
  static constexpr int kMaxNesting = 64;
  int depth_ = 0;  // ${ being read
  std::vector<std::vector<Entry>> out_;
};

}  // namespace

std::vector<std::vector<Entry>> lex_shell_script(const std::string& text,
                                                 const std::string& label) {
  return Lexer(text, label).run();
}

bool split_assignment(const RawWord& w, std::string* name, RawWord* rest) {
  if (w.empty() || w[0].kind != Part::Kind::kText || w[0].quoted) return false;
  const std::string& t = w[0].text;
  const std::size_t eq = t.find('=');
  if (eq == std::string::npos || eq == 0 || !is_name_start(t[0])) return false;
  for (std::size_t k = 1; k < eq; ++k) {
    if (!is_name_char(t[k]) && !(k + 1 == eq && t[k] == '+')) return false;
  }
  *name = t.substr(0, eq);
  rest->clear();
  if (eq + 1 < t.size()) {
    Part head = w[0];
    head.text = t.substr(eq + 1);
    head.pos.erase(head.pos.begin(), head.pos.begin() + static_cast<long>(eq) + 1);
    head.at = head.pos.front();
    rest->push_back(head);
  }
  rest->insert(rest->end(), w.begin() + 1, w.end());
  return true;
}

std::string literal_word(const Entry& e) {
  return !e.array && e.word.size() == 1 && e.word[0].kind == Part::Kind::kText && !e.word[0].quoted
             ? e.word[0].text
             : "";
}

}  // namespace trident::shell
