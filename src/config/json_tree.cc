#include "config/json_tree.h"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <nlohmann/json.hpp>
#include <unordered_set>
#include <utility>
#include <vector>

#include "config/limits.h"

namespace trident {
namespace {

// A character iterator that records how far nlohmann-json's lexer has read, so that each SAX
// event can be given the position of the token that caused it.
class CountingIterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  CountingIterator(const char* p, const char* base, std::size_t* consumed)
      : p_(p), base_(base), consumed_(consumed) {}
  reference operator*() const { return *p_; }
  CountingIterator& operator++() {
    ++p_;
    *consumed_ = static_cast<std::size_t>(p_ - base_);
    return *this;
  }
  CountingIterator operator++(int) {
    CountingIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const CountingIterator& o) const { return p_ == o.p_; }
  bool operator!=(const CountingIterator& o) const { return p_ != o.p_; }

 private:
  const char* p_;
  const char* base_;
  std::size_t* consumed_;
};

bool is_token_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' ||
         c == '+' || c == '-' || c == '"';
}

class TreeSax {
 public:
  using number_integer_t = nlohmann::json::number_integer_t;
  using number_unsigned_t = nlohmann::json::number_unsigned_t;
  using number_float_t = nlohmann::json::number_float_t;
  using string_t = nlohmann::json::string_t;
  using binary_t = nlohmann::json::binary_t;

  TreeSax(const std::string& text, std::string file, const std::size_t* consumed, Diagnostics* diag)
      : text_(text), file_(std::move(file)), consumed_(consumed), diag_(diag) {
    line_starts_.push_back(0);
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  YamlNodePtr root() const { return root_; }

  // Returns the mark of byte `offset` of the text.
  YamlMark mark_at(std::size_t offset) const {
    offset = std::min(offset, text_.size());
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    const std::size_t line = static_cast<std::size_t>(it - line_starts_.begin());
    return YamlMark{file_, static_cast<int>(line), static_cast<int>(offset - *(it - 1) + 1)};
  }

  bool null() { return scalar(YamlNode::Kind::kNull, "", false); }
  bool boolean(bool) { return scalar(YamlNode::Kind::kScalar, "", false); }
  bool number_integer(number_integer_t) { return scalar(YamlNode::Kind::kScalar, "", false); }
  bool number_unsigned(number_unsigned_t) { return scalar(YamlNode::Kind::kScalar, "", false); }
  bool number_float(number_float_t, const string_t&) {
    return scalar(YamlNode::Kind::kScalar, "", false);
  }
  bool string(string_t& value) { return scalar(YamlNode::Kind::kScalar, value, true); }
  bool binary(binary_t&) { return scalar(YamlNode::Kind::kNull, "", false); }

  bool start_object(std::size_t) { return open(YamlNode::Kind::kMap); }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return open(YamlNode::Kind::kSequence); }
  bool end_array() { return close(); }

  bool key(string_t& name) {
    Frame& top = stack_.back();
    const YamlMark mark = mark_at(token_start());
    if (!top.keys.insert(name).second) {
      const YamlEntry* first = top.node->find(name);
      std::string path;
      for (const Frame& f : stack_) {
        if (f.node->is_map() && f.has_key) path += f.key + ".";
      }
      const ConfigError error(location_of(mark, path + name),
                              "duplicate key (first given at line " +
                                  std::to_string(first->key_mark.line) + "; remove one)");
      if (diag_ == nullptr) throw error;
      diag_->add(error, false);
      top.skip_value = true;
    }
    top.has_key = true;
    top.key = name;
    top.key_mark = mark;
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::json::exception& e) {
    // "[json.exception.parse_error.101] parse error at line 1, column 2: <what>": keep <what>,
    // and point at the start of the offending token rather than where reading stopped.
    std::string what = e.what();
    const std::size_t colon = what.find(": ");
    if (colon != std::string::npos) what = what.substr(colon + 2);
    throw ConfigError(location_of(mark_at(token_start()), ""), "JSON syntax error: " + what);
  }

 private:
  struct Frame {
    YamlNodePtr node;
    bool has_key = false;
    bool skip_value = false;
    std::string key;
    YamlMark key_mark;
    std::unordered_set<std::string> keys;
  };

  // Start of the token just read: back from the lexer's position over a look-ahead character,
  // then over the token (to its opening quote for a string).
  std::size_t token_start() const {
    std::size_t end = std::min(*consumed_, text_.size());
    if (end > 0 && !is_token_char(text_[end - 1])) --end;
    if (end == 0) return 0;
    std::size_t i = end - 1;
    if (text_[i] == '"') {
      while (i > 0) {
        --i;
        if (text_[i] != '"') continue;
        std::size_t slashes = 0;
        while (i > slashes && text_[i - 1 - slashes] == '\\') ++slashes;
        if (slashes % 2 == 0) return i;
      }
      return 0;
    }
    while (i > 0 && is_token_char(text_[i - 1]) && text_[i - 1] != '"') --i;
    return i;
  }

  YamlNodePtr make(YamlNode::Kind kind, const YamlMark& mark) {
    if (++nodes_ > limits::kMaxInputNodes) {
      throw ConfigError(location_of(mark, ""), "more than " +
                                                   std::to_string(limits::kMaxInputNodes) +
                                                   " values, the limit for one file");
    }
    auto node = std::make_shared<YamlNode>();
    node->kind = kind;
    node->mark = mark;
    return node;
  }

  bool scalar(YamlNode::Kind kind, const std::string& value, bool quoted) {
    const std::size_t start = token_start();
    YamlNodePtr node = make(kind, mark_at(start));
    if (quoted) {
      node->scalar = value;
      node->quoted = true;
    } else if (kind == YamlNode::Kind::kScalar) {
      std::size_t end = start;
      while (end < text_.size() && is_token_char(text_[end]) && text_[end] != '"') ++end;
      node->scalar = text_.substr(start, end - start);
    }
    add(std::move(node));
    return true;
  }

  bool open(YamlNode::Kind kind) {
    const std::size_t at = *consumed_ > 0 ? *consumed_ - 1 : 0;
    YamlNodePtr node = make(kind, mark_at(at));
    if (static_cast<int>(stack_.size()) + 1 > limits::kMaxNestingDepth) {
      throw ConfigError(location_of(node->mark, ""), "objects and arrays nested more than " +
                                                         std::to_string(limits::kMaxNestingDepth) +
                                                         " levels deep, the limit for one file");
    }
    Frame frame;
    frame.node = std::move(node);
    stack_.push_back(std::move(frame));
    return true;
  }

  bool close() {
    YamlNodePtr node = std::move(stack_.back().node);
    stack_.pop_back();
    add(std::move(node));
    return true;
  }

  void add(YamlNodePtr node) {
    if (stack_.empty()) {
      root_ = std::move(node);
      return;
    }
    Frame& top = stack_.back();
    if (top.node->is_sequence()) {
      top.node->items.push_back(std::move(node));
      return;
    }
    if (!top.skip_value) {
      top.node->entries.push_back(YamlEntry{top.key, top.key_mark, std::move(node), ""});
    }
    top.has_key = false;
    top.skip_value = false;
  }

  const std::string& text_;
  std::string file_;
  const std::size_t* consumed_;
  Diagnostics* diag_;
  std::vector<std::size_t> line_starts_;
  std::vector<Frame> stack_;
  std::int64_t nodes_ = 0;
  YamlNodePtr root_;
};

}  // namespace

YamlNodePtr parse_json(const std::string& text, const std::string& file, Diagnostics* diag) {
  std::size_t consumed = 0;
  TreeSax sax(text, file, &consumed, diag);
  const char* base = text.data();
  CountingIterator first(base, base, &consumed);
  CountingIterator last(base + text.size(), base, &consumed);
  nlohmann::json::sax_parse(first, last, &sax, nlohmann::json::input_format_t::json,
                            /*strict=*/true, /*ignore_comments=*/false);
  YamlNodePtr root = sax.root();
  if (!root) {
    root = std::make_shared<YamlNode>();
    root->mark = YamlMark{file, 1, 1};
  }
  return root;
}

}  // namespace trident
