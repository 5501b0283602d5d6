#include "config/yaml_tree.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <map>
#include <sstream>
#include <unordered_set>

#include "config/limits.h"

namespace trident {

const YamlEntry* YamlNode::find(const std::string& key) const {
  for (const YamlEntry& e : entries) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

YamlEntry* YamlNode::find(const std::string& key) {
  for (YamlEntry& e : entries) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

void YamlNode::set(const std::string& key, const YamlMark& key_mark, YamlNodePtr value) {
  if (YamlEntry* e = find(key)) {
    e->key_mark = key_mark;
    e->value = std::move(value);
    e->written_as.clear();
    return;
  }
  entries.push_back(YamlEntry{key, key_mark, std::move(value), ""});
}

bool YamlNode::erase(const std::string& key) {
  for (auto it = entries.begin(); it != entries.end(); ++it) {
    if (it->key == key) {
      entries.erase(it);
      return true;
    }
  }
  return false;
}

std::string YamlNode::describe() const {
  switch (kind) {
    case Kind::kNull:
      return "an empty value";
    case Kind::kScalar:
      return std::string(quoted ? "the quoted string" : "the value") + " `" + excerpt(scalar) + "`";
    case Kind::kSequence:
      return "a list";
    case Kind::kMap:
      return "a map";
  }
  return "a value";
}

std::int64_t YamlNode::size() const {
  std::int64_t n = 1;
  for (const YamlNodePtr& item : items) n += item->size();
  for (const YamlEntry& e : entries) n += e.value->size();
  return n;
}

YamlNodePtr YamlNode::clone() const {
  auto copy = std::make_shared<YamlNode>(*this);
  for (YamlNodePtr& item : copy->items) item = item->clone();
  for (YamlEntry& e : copy->entries) e.value = e.value->clone();
  return copy;
}

SourceLocation location_of(const YamlMark& mark, const std::string& key) {
  SourceLocation loc;
  loc.file = mark.file;
  loc.line = mark.line;
  loc.column = mark.column;
  loc.key = key;
  return loc;
}

const YamlNode* find_path(const YamlNode& root, const std::string& path,
                          const YamlEntry** entry_out) {
  const YamlNode* node = &root;
  const YamlEntry* entry = nullptr;
  for (const std::string& part : split_key_path(path)) {
    entry = node->find(part);
    if (entry == nullptr) return nullptr;
    node = entry->value.get();
  }
  if (entry_out != nullptr) *entry_out = entry;
  return node;
}

namespace {

// Builds a YamlNode tree from parser events.
class TreeBuilder : public YAML::EventHandler {
 public:
  TreeBuilder(std::string file, Diagnostics* diag) : file_(std::move(file)), diag_(diag) {}

  YamlNodePtr root() const { return root_; }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto node = make(YamlNode::Kind::kNull, mark);
    remember(anchor, node);
    add(node);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) throw syntax(mark, "unknown alias");
    // Expanded in place: a chain of aliases ("billion laughs") meets the node and depth caps.
    add(copy(*it->second, static_cast<int>(stack_.size()), to_mark(mark)));
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    auto node = make(YamlNode::Kind::kScalar, mark);
    node->scalar = value;
    // yaml-cpp gives plain scalars the non-specific tag "?" and quoted ones "!".
    node->quoted = (tag == "!" || tag == "tag:yaml.org,2002:str");
    node->tag = written_tag(tag);
    remember(anchor, node);
    add(node);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    refuse_tag(mark, tag, "a list");
    open(make(YamlNode::Kind::kSequence, mark), anchor);
  }
  void OnSequenceEnd() override { close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    refuse_tag(mark, tag, "a map");
    open(make(YamlNode::Kind::kMap, mark), anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Frame {
    YamlNodePtr node;
    YAML::anchor_t anchor = 0;
    bool has_key = false;     // maps: a key was read and waits for its value
    bool skip_value = false;  // maps: that key was a duplicate; drop its value
    std::string key;
    YamlMark key_mark;
    std::unordered_set<std::string> keys;  // maps: keys read so far, for duplicates
    bool key_is_merge = false;             // maps: the waiting key is the merge key `<<`
    YamlNodePtr merge;                     // maps: the merge key's value, expanded at the end
    YamlMark merge_mark;                   // ... and where `<<` is written
    std::size_t merge_at = 0;              // ... and the entry it stands before
  };

  YamlMark to_mark(const YAML::Mark& m) const {
    YamlMark out;
    out.file = file_;
    if (!m.is_null()) {
      out.line = m.line + 1;
      out.column = m.column + 1;
    }
    return out;
  }

  // Returns the tag as a user writes it: "" for none, "!!int" for the core schema's, else as is.
  static std::string written_tag(const std::string& tag) {
    if (tag.empty() || tag == "?" || tag == "!") return "";
    const std::string core = "tag:yaml.org,2002:";
    if (tag.compare(0, core.size(), core) == 0) return "!!" + tag.substr(core.size());
    return tag;
  }

  // Lists and maps are read by their structure: a tag on one would be silently ignored.
  void refuse_tag(const YAML::Mark& mark, const std::string& tag, const char* what) const {
    const std::string written = written_tag(tag);
    if (written.empty() || written == "!!seq" || written == "!!map") return;
    throw ConfigError(location_of(to_mark(mark), ""),
                      "the tag `" + written + "` on " + what +
                          " is not accepted (write the value without a tag)");
  }

  ConfigError syntax(const YAML::Mark& m, const std::string& what) const {
    return ConfigError(location_of(to_mark(m), ""), "YAML syntax error: " + what);
  }

  // Counts one more node; throws past limits::kMaxInputNodes.
  void count_node(const YamlMark& mark) {
    if (++nodes_ > limits::kMaxInputNodes) {
      throw ConfigError(location_of(mark, ""),
                        "more than " + std::to_string(limits::kMaxInputNodes) +
                            " values (aliases expanded), the limit for one file");
    }
  }

  void check_depth(int depth, const YamlMark& mark) const {
    if (depth > limits::kMaxNestingDepth) {
      throw ConfigError(location_of(mark, ""),
                        "maps and lists nested more than " +
                            std::to_string(limits::kMaxNestingDepth) +
                            " levels deep (aliases expanded), the limit for one file");
    }
  }

  // Deep copy of an anchored node placed at `depth`, counted against the caps.
  YamlNodePtr copy(const YamlNode& node, int depth, const YamlMark& mark) {
    count_node(mark);
    auto out = std::make_shared<YamlNode>();
    out->kind = node.kind;
    out->mark = node.mark;
    out->scalar = node.scalar;
    out->quoted = node.quoted;
    if (!node.items.empty() || !node.entries.empty()) check_depth(depth + 1, mark);
    for (const YamlNodePtr& item : node.items) out->items.push_back(copy(*item, depth + 1, mark));
    for (const YamlEntry& e : node.entries) {
      out->entries.push_back(
          YamlEntry{e.key, e.key_mark, copy(*e.value, depth + 1, mark), e.written_as});
    }
    return out;
  }

  YamlNodePtr make(YamlNode::Kind kind, const YAML::Mark& mark) {
    auto node = std::make_shared<YamlNode>();
    node->kind = kind;
    node->mark = to_mark(mark);
    count_node(node->mark);
    return node;
  }

  void remember(YAML::anchor_t anchor, const YamlNodePtr& node) {
    if (anchor != 0) anchors_[anchor] = node;
  }

  void open(YamlNodePtr node, YAML::anchor_t anchor) {
    check_depth(static_cast<int>(stack_.size()) + 1, node->mark);
    Frame frame;
    frame.node = std::move(node);
    frame.anchor = anchor;
    stack_.push_back(std::move(frame));
  }

  void close() {
    Frame frame = std::move(stack_.back());
    stack_.pop_back();
    if (frame.merge) expand_merge(&frame);
    remember(frame.anchor, frame.node);
    add(frame.node);
  }

  // Attaches a finished node to the open container (or makes it the root).
  void add(const YamlNodePtr& node) {
    if (stack_.empty()) {
      root_ = node;
      return;
    }
    Frame& top = stack_.back();
    if (top.node->is_sequence()) {
      top.node->items.push_back(node);
      return;
    }
    if (top.has_key && top.skip_value) {  // the value of a duplicate key, already reported
      top.has_key = false;
      top.skip_value = false;
      return;
    }
    if (!top.has_key) {
      if (!node->is_scalar()) {
        throw ConfigError(
            location_of(node->mark, ""),
            "YAML syntax error: a map key must be a plain name, got " + node->describe());
      }
      const YamlEntry* first =
          top.keys.count(node->scalar) != 0 ? top.node->find(node->scalar) : nullptr;
      // The merge key is held apart from the entries until the map ends.
      const int first_line = first != nullptr                            ? first->key_mark.line
                             : top.merge && top.keys.count(node->scalar) ? top.merge_mark.line
                                                                         : 0;
      if (first_line > 0) {
        std::string path;
        for (const Frame& f : stack_) {
          if (f.node->is_map() && f.has_key) path += f.key + ".";
        }
        const ConfigError error(
            location_of(node->mark, path + node->scalar),
            "duplicate key (first given at line " + std::to_string(first_line) + "; remove one)");
        if (diag_ == nullptr) throw error;
        diag_->add(error, false);
        top.has_key = true;
        top.skip_value = true;
        return;
      }
      top.has_key = true;
      top.key = node->scalar;
      top.key_mark = node->mark;
      top.keys.insert(node->scalar);
      // YAML 1.1's merge key: a plain `<<` (a quoted one is an ordinary key).
      top.key_is_merge = node->scalar == "<<" && !node->quoted && node->tag.empty();
      return;
    }
    top.has_key = false;
    if (top.key_is_merge) {
      top.key_is_merge = false;
      top.merge = node;
      top.merge_mark = top.key_mark;
      top.merge_at = top.node->entries.size();
      return;
    }
    top.node->entries.push_back(YamlEntry{top.key, top.key_mark, node, ""});
  }

  // Expands the map's merge key (`<<: *base` or `<<: [*a, *b]`) where it is written: every
  // key of the merged maps that the map does not give itself, an earlier map of a list before
  // a later one. The merged values keep the positions they are written at.
  void expand_merge(Frame* frame) {
    std::vector<const YamlNode*> sources;
    const auto refuse = [&](const YamlNode& what) {
      throw ConfigError(location_of(what.mark, ""),
                        "the merge key `<<` takes a map or a list of maps (such as *defaults), "
                        "got " +
                            what.describe());
    };
    if (frame->merge->is_map()) {
      sources.push_back(frame->merge.get());
    } else if (frame->merge->is_sequence()) {
      for (const YamlNodePtr& item : frame->merge->items) {
        if (!item->is_map()) refuse(*item);
        sources.push_back(item.get());
      }
    } else {
      refuse(*frame->merge);
    }
    std::vector<YamlEntry> merged;
    std::unordered_set<std::string> taken = frame->keys;
    for (const YamlNode* source : sources) {
      for (const YamlEntry& e : source->entries) {
        if (taken.insert(e.key).second) merged.push_back(e);
      }
    }
    std::vector<YamlEntry>& entries = frame->node->entries;
    entries.insert(entries.begin() + static_cast<std::ptrdiff_t>(frame->merge_at), merged.begin(),
                   merged.end());
  }

  std::string file_;
  Diagnostics* diag_;
  std::int64_t nodes_ = 0;
  YamlNodePtr root_;
  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, YamlNodePtr> anchors_;
};

}  // namespace

namespace {

// yaml-cpp queues every token of a flow collection that might turn out to be a key, so a
// flood of '[' costs hundreds of bytes per byte before the depth check above sees it. Counted
// on the raw text (quotes ignored), far more open brackets than any real nesting are refused
// first.
void check_flow_brackets(const std::string& text, const std::string& file) {
  constexpr int kMaxOpen = 4 * limits::kMaxNestingDepth;
  int open = 0, line = 1, column = 0;
  for (char c : text) {
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
    } else if (c == '[' || c == '{') {
      if (++open > kMaxOpen) {
        throw ConfigError(SourceLocation{file, line, column, ""},
                          "more than " + std::to_string(kMaxOpen) +
                              " unclosed '[' or '{' (maps and lists nested deeper than the "
                              "limit of " +
                              std::to_string(limits::kMaxNestingDepth) + ")");
      }
    } else if ((c == ']' || c == '}') && open > 0) {
      --open;
    }
  }
}

}  // namespace

YamlNodePtr parse_yaml(const std::string& text, const std::string& file, Diagnostics* diag) {
  check_flow_brackets(text, file);
  std::istringstream in(text);
  TreeBuilder builder(file, diag);
  try {
    YAML::Parser parser(in);
    if (!parser.HandleNextDocument(builder)) {
      auto empty = std::make_shared<YamlNode>();
      empty->mark.file = file;
      return empty;
    }
    TreeBuilder second(file, nullptr);
    if (parser.HandleNextDocument(second)) {
      YamlMark m = second.root() ? second.root()->mark : YamlMark{file, 0, 0};
      throw ConfigError(location_of(m, ""),
                        "YAML syntax error: more than one document (expected a single map)");
    }
  } catch (const YAML::Exception& e) {
    SourceLocation loc;
    loc.file = file;
    if (!e.mark.is_null()) {
      loc.line = e.mark.line + 1;
      loc.column = e.mark.column + 1;
    }
    throw ConfigError(loc, "YAML syntax error: " + e.msg);
  }
  YamlNodePtr root = builder.root();
  if (!root) {
    root = std::make_shared<YamlNode>();
    root->mark.file = file;
  }
  return root;
}

}  // namespace trident
