#include "config/shell_words.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <utility>

#include "core/errors.h"

namespace trident {
namespace {

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

// A word being expanded: positioned characters, some of them an expansion without a value,
// kept as written (hole: an index into Script::holes_, -1 for an ordinary character).
struct Field {
  std::string text;
  std::vector<Pos> pos;
  std::vector<int> hole;
  Pos start;
  bool quoted = false;  // a quoted part made it: it is a word even when empty
};

// One word of a command, or an array assignment NAME=(...).
struct Entry {
  RawWord word;
  bool array = false;
  std::string array_name;
  std::vector<RawWord> elements;
};

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

class Script {
 public:
  Script(const std::string& text, const std::string& label, const ShellEnvironment& env)
      : s_(text), label_(label), env_(env) {
    Pos p{1, 1};
    for (char c : s_) {
      at_.push_back(p);
      p = c == '\n' ? Pos{p.line + 1, 1} : Pos{p.line, p.column + 1};
    }
    at_.push_back(p);
  }

  std::vector<std::vector<ShellWord>> run() {
    std::vector<Entry> command;
    while (i_ < s_.size()) {
      const char c = peek();
      if (c == '\\' && peek(1) == '\n') {
        i_ += 2;
      } else if (is_blank(c)) {
        ++i_;
      } else if (c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' || c == ')') {
        finish(&command);
        ++i_;
      } else if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else if (c == '<' || c == '>') {
        skip_redirection();
      } else {
        Entry e;
        e.word = lex_word(false);
        std::string name;
        RawWord rest;
        if ((peek() == '<' || peek() == '>') && is_number(e.word)) {
          skip_redirection();  // 2>&1, 2> file: the number is the descriptor
          continue;
        }
        if (peek() == '(' && assignment(e.word, &name, &rest) && rest.empty()) {
          e.array = true;
          e.array_name = name;
          e.elements = lex_array();
        }
        command.push_back(std::move(e));
      }
    }
    finish(&command);
    return std::move(out_);
  }

 private:
  char peek(std::size_t k = 0) const { return i_ + k < s_.size() ? s_[i_ + k] : '\0'; }

  [[noreturn]] void fail(Pos p, const std::string& what) const {
    throw ConfigError(SourceLocation{label_, p.line, p.column, ""}, what);
  }

  static bool word_end(char c) {
    return c == '\0' || is_blank(c) || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' ||
           c == '>' || c == '(' || c == ')';
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
  RawWord lex_word(bool in_braces) {
    RawWord w;
    while (i_ < s_.size()) {
      const char c = peek();
      if (c == '\\' && peek(1) == '\n') {
        i_ += 2;
      } else if (in_braces ? c == '}' : word_end(c)) {
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
      part.word = lex_word(true);
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
      } else if (word_end(c)) {
        ++i_;  // ; & | < > ( inside an array: not words
      } else {
        elements.push_back(lex_word(false));
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
    if (!word_end(peek())) lex_word(false);  // the file: not a word of the command
  }

  static bool is_number(const RawWord& w) {
    return w.size() == 1 && w[0].kind == Part::Kind::kText && !w[0].quoted && !w[0].text.empty() &&
           w[0].text.find_first_not_of("0123456789") == std::string::npos;
  }

  static std::string literal(const Entry& e) {
    return !e.array && e.word.size() == 1 && e.word[0].kind == Part::Kind::kText &&
                   !e.word[0].quoted
               ? e.word[0].text
               : "";
  }

  // Whether `w` is NAME=... (or NAME+=...); sets the name (with a trailing + to append) and
  // the parts after '='.
  static bool assignment(const RawWord& w, std::string* name, RawWord* rest) {
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

  // Sets NAME (or appends for NAME+: to the first item's text, or array items).
  void assign(std::string name, std::vector<Field> value, bool array) {
    if (name.back() == '+') {
      name.pop_back();
      std::vector<Field>& old = vars_[name];
      if (!array && !old.empty() && !value.empty()) {
        append(value[0], &old.front());
        return;
      }
      old.insert(old.end(), value.begin(), value.end());
      return;
    }
    vars_[name] = std::move(value);
  }

  // Sets the variables of assignments, keeps the words of commands.
  void finish(std::vector<Entry>* command) {
    std::vector<Entry>& c = *command;
    std::size_t k = 0;
    for (const char* keyword : {"then", "else", "do", "{", "!"}) {
      if (k < c.size() && literal(c[k]) == keyword) ++k;
    }
    bool declaration = false;
    for (; k < c.size(); ++k) {
      std::string name;
      RawWord rest;
      if (c[k].array) {
        std::vector<Field> items;
        for (const RawWord& e : c[k].elements) {
          for (Field& f : expand(e, true)) items.push_back(std::move(f));
        }
        assign(c[k].array_name, std::move(items), true);
      } else if (assignment(c[k].word, &name, &rest)) {
        assign(name, expand(rest, false), false);
      } else if (!declaration && (literal(c[k]) == "export" || literal(c[k]) == "declare" ||
                                  literal(c[k]) == "typeset" || literal(c[k]) == "local" ||
                                  literal(c[k]) == "readonly")) {
        declaration = true;
      } else if (!declaration) {
        break;
      }
    }
    std::vector<ShellWord> words;
    for (; k < c.size(); ++k) {
      if (c[k].array) continue;
      for (const Field& f : expand(c[k].word, true)) {
        ShellWord w;
        w.text = f.text;
        const Pos p = f.pos.empty() ? f.start : f.pos.front();
        w.line = p.line;
        w.column = p.column;
        bool all_holes = !f.text.empty() && !f.quoted;
        for (std::size_t h = 0; h < f.hole.size(); ++h) {
          if (f.hole[h] >= 0 && w.unresolved.empty()) w.unresolved = holes_[f.hole[h]];
          all_holes = all_holes && f.hole[h] >= 0;
        }
        w.bare = all_holes;
        words.push_back(std::move(w));
      }
    }
    if (!words.empty()) out_.push_back(std::move(words));
    c.clear();
  }

  // Expansion: the fields (words) of `w`; `split` splits unquoted expansions at blanks (not
  // in an assignment's value, which stays one field).
  std::vector<Field> expand(const RawWord& w, bool split) {
    std::vector<Field> fields;
    bool open = false;
    for (const Part& p : w) expand_part(p, false, split, false, &fields, &open);
    if (!split && fields.size() > 1) {
      Field joined = fields[0];
      for (std::size_t k = 1; k < fields.size(); ++k) {
        Field space;
        space.text = " ";
        space.pos = {fields[k].start};
        space.hole = {-1};
        append(space, &joined);
        append(fields[k], &joined);
      }
      fields = {joined};
    }
    return fields;
  }

  static void append(const Field& from, Field* to) {
    to->text += from.text;
    to->pos.insert(to->pos.end(), from.pos.begin(), from.pos.end());
    to->hole.insert(to->hole.end(), from.hole.begin(), from.hole.end());
    to->quoted = to->quoted || from.quoted;
  }

  static Field& current(std::vector<Field>* fields, bool* open, Pos start) {
    if (!*open) {
      fields->push_back(Field{});
      fields->back().start = start;
      *open = true;
    }
    return fields->back();
  }

  // Adds `value` to the fields: whole when quoted, else split at ordinary blanks.
  static void add_value(const Field& value, bool quoted, bool split, Pos start,
                        std::vector<Field>* fields, bool* open) {
    if (quoted || !split) {
      Field& f = current(fields, open, start);
      append(value, &f);
      f.quoted = f.quoted || quoted;
      return;
    }
    for (std::size_t k = 0; k < value.text.size(); ++k) {
      const char c = value.text[k];
      if (value.hole[k] < 0 && (is_blank(c) || c == '\n')) {
        *open = false;
        continue;
      }
      Field& f = current(fields, open, value.pos[k]);
      f.text += c;
      f.pos.push_back(value.pos[k]);
      f.hole.push_back(value.hole[k]);
    }
  }

  void expand_part(const Part& p, bool outer_quoted, bool split, bool split_text,
                   std::vector<Field>* fields, bool* open) {
    const bool quoted = p.quoted || outer_quoted;
    if (p.kind == Part::Kind::kText) {
      Field text;
      text.text = p.text;
      text.pos = p.pos;
      text.hole.assign(p.text.size(), -1);
      add_value(text, quoted, split && split_text, p.at, fields, open);
      return;
    }
    if (p.kind == Part::Kind::kOpaque) return add_hole(p, quoted, fields, open);
    const std::vector<Field>* value = nullptr;
    std::vector<Field> from_env;
    if (const auto it = vars_.find(p.name); it != vars_.end()) {
      value = &it->second;
    } else if (const std::optional<std::string> env = env_(p.name)) {
      Field f;
      f.text = *env;
      f.pos.assign(env->size(), p.at);
      f.hole.assign(env->size(), -1);
      from_env.push_back(f);
      value = &from_env;
    }
    bool empty = true;
    if (value != nullptr) {
      for (const Field& f : *value) empty = empty && f.text.empty();
    }
    const bool colon = !p.op.empty() && p.op[0] == ':';
    const char op = p.op.empty() ? '\0' : p.op.back();
    const bool missing = value == nullptr || (colon && empty);
    if ((op == '-' || op == '=') && missing) {
      if (op == '=') assign(p.name, expand(p.word, false), false);
      for (const Part& d : p.word) expand_part(d, quoted, split, !quoted, fields, open);
      return;
    }
    if (op == '+') {
      if (!missing) {
        for (const Part& d : p.word) expand_part(d, quoted, split, !quoted, fields, open);
      }
      return;
    }
    if (value == nullptr) return add_hole(p, quoted, fields, open);
    std::vector<Field> items;
    if (p.index == "@" || p.index == "*") {
      items = *value;
    } else {
      const std::size_t k = p.index.empty() ? 0 : std::strtoul(p.index.c_str(), nullptr, 10);
      if (k < value->size()) items.push_back((*value)[k]);
    }
    if (quoted && p.index != "@") {  // one word, the items joined by blanks
      Field& f = current(fields, open, p.at);
      f.quoted = true;
      for (std::size_t k = 0; k < items.size(); ++k) {
        if (k > 0) f.text += ' ', f.pos.push_back(p.at), f.hole.push_back(-1);
        append(items[k], &f);
      }
      return;
    }
    for (std::size_t k = 0; k < items.size(); ++k) {
      if (k > 0 && split) *open = false;  // each item a word of its own
      if (k > 0 && !split) {
        Field& f = current(fields, open, p.at);
        f.text += ' ', f.pos.push_back(p.at), f.hole.push_back(-1);
      }
      add_value(items[k], quoted, split, p.at, fields, open);
    }
  }

  // An expansion without a value: kept as written, marked.
  void add_hole(const Part& p, bool quoted, std::vector<Field>* fields, bool* open) {
    holes_.push_back(p.text);
    Field& f = current(fields, open, p.at);
    f.quoted = f.quoted || quoted;
    for (char c : p.text) {
      f.text += c;
      f.pos.push_back(p.at);
      f.hole.push_back(static_cast<int>(holes_.size()) - 1);
    }
  }

  const std::string& s_;
  const std::string& label_;
  const ShellEnvironment& env_;
  std::vector<Pos> at_;  // the line and column of each character of s_ (and of its end)
  std::size_t i_ = 0;
  std::map<std::string, std::vector<Field>> vars_;
  std::vector<std::string> holes_;
  std::vector<std::vector<ShellWord>> out_;
};

}  // namespace

ShellEnvironment process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

std::vector<std::vector<ShellWord>> split_shell_commands(const std::string& text,
                                                         const std::string& label,
                                                         const ShellEnvironment& env) {
  return Script(text, label, env).run();
}

std::vector<ShellWord> split_shell_words(const std::string& text, const std::string& label,
                                         const ShellEnvironment& env) {
  std::vector<ShellWord> words;
  for (std::vector<ShellWord>& command : split_shell_commands(text, label, env)) {
    for (ShellWord& w : command) words.push_back(std::move(w));
  }
  return words;
}

}  // namespace trident
