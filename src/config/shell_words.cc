#include "config/shell_words.h"

#include <cstdlib>
#include <map>
#include <utility>

#include "config/shell_lexer.h"
#include "core/errors.h"

namespace trident {
namespace {

using shell::Entry;
using shell::is_blank;
using shell::Part;
using shell::Pos;
using shell::RawWord;

// A word being expanded: positioned characters, some of them an expansion without a value,
// kept as written (hole: an index into Expander::holes_, -1 for an ordinary character).
struct Field {
  std::string text;
  std::vector<Pos> pos;
  std::vector<int> hole;
  Pos start;
  bool quoted = false;  // a quoted part made it: it is a word even when empty
};

// Runs the assignments of a script's commands in order and expands the other commands' words.
class Expander {
 public:
  Expander(const ShellEnvironment& env, const std::string& label) : env_(env), label_(label) {}

  std::vector<std::vector<ShellWord>> run(const std::vector<std::vector<Entry>>& commands) {
    for (const std::vector<Entry>& c : commands) finish(c);
    return std::move(out_);
  }

 private:
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
  void finish(const std::vector<Entry>& c) {
    std::size_t k = 0;
    for (const char* keyword : {"then", "else", "do", "{", "!"}) {
      if (k < c.size() && literal_word(c[k]) == keyword) ++k;
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
      } else if (split_assignment(c[k].word, &name, &rest)) {
        assign(name, expand(rest, false), false);
      } else if (!declaration &&
                 (literal_word(c[k]) == "export" || literal_word(c[k]) == "declare" ||
                  literal_word(c[k]) == "typeset" || literal_word(c[k]) == "local" ||
                  literal_word(c[k]) == "readonly")) {
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

  // Counts `chars` more characters of expansion; throws past the limit (a script doubling a
  // variable again and again would otherwise fill the memory).
  void produce(std::size_t chars) {
    constexpr std::size_t kMaxExpanded = std::size_t{16} << 20;
    produced_ += chars;
    if (produced_ > kMaxExpanded) {
      throw ConfigError(SourceLocation{label_, 0, 0, ""},
                        "the script's variables expand to more than 16 MiB of text, the limit");
    }
  }

  void append(const Field& from, Field* to) {
    produce(from.text.size());
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
  void add_value(const Field& value, bool quoted, bool split, Pos start, std::vector<Field>* fields,
                 bool* open) {
    if (quoted || !split) {
      Field& f = current(fields, open, start);
      append(value, &f);
      f.quoted = f.quoted || quoted;
      return;
    }
    produce(value.text.size());
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

  const ShellEnvironment& env_;
  const std::string& label_;
  std::size_t produced_ = 0;  // characters of expansion so far
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
  return Expander(env, label).run(shell::lex_shell_script(text, label));
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
