// A YAML document tree that remembers, for every node, the file, line and column it came
// from. Built from yaml-cpp's event parser so that duplicate keys and syntax errors are
// reported with their position instead of silently resolved.
#ifndef TRIDENT_CONFIG_YAML_TREE_H_
#define TRIDENT_CONFIG_YAML_TREE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/diagnostics.h"
#include "core/errors.h"
#include "core/text.h"

namespace trident {

// Position of a node: file as the user gave it (or "--set k=v"), 1-based line and column,
// 0 when unknown.
struct YamlMark {
  std::string file;
  int line = 0;
  int column = 0;
};

class YamlNode;
using YamlNodePtr = std::shared_ptr<YamlNode>;

// One `key: value` pair of a map, in document order.
struct YamlEntry {
  std::string key;
  YamlMark key_mark;
  YamlNodePtr value;
  // The name the user's file gives this setting when it is not `key` (a Hugging Face
  // config.json's "num_hidden_layers" for `num_layers`); messages use it. Empty otherwise.
  std::string written_as;
};

class YamlNode {
 public:
  enum class Kind { kNull, kScalar, kSequence, kMap };

  Kind kind = Kind::kNull;
  YamlMark mark;
  std::string scalar;   // kScalar: the text as written (without quotes)
  bool quoted = false;  // kScalar: written in quotes, so a string whatever it looks like
  // An explicit tag as written ("!!int", "!custom"); "" for none. Readers accept only the tag
  // of the type they expect (!!str, !!int, !!float, !!bool) and refuse the rest.
  std::string tag;
  std::vector<YamlNodePtr> items;  // kSequence
  std::vector<YamlEntry> entries;  // kMap

  bool is_null() const { return kind == Kind::kNull; }
  bool is_scalar() const { return kind == Kind::kScalar; }
  bool is_sequence() const { return kind == Kind::kSequence; }
  bool is_map() const { return kind == Kind::kMap; }

  // Returns the entry for `key` of a map, or nullptr (also for non-maps).
  const YamlEntry* find(const std::string& key) const;
  YamlEntry* find(const std::string& key);

  // Sets `key` of a map to `value`, replacing an existing entry in place (and its
  // written_as) or appending.
  void set(const std::string& key, const YamlMark& key_mark, YamlNodePtr value);
  // Removes `key` from a map; returns whether it was there.
  bool erase(const std::string& key);

  // Returns a phrase for messages: "a map", "a list", "null", or "the string `abc`".
  std::string describe() const;

  // Returns a deep copy.
  YamlNodePtr clone() const;
  // Returns the number of nodes in this subtree (this one included).
  std::int64_t size() const;
};

// Parses one YAML document. `file` is used only in marks and messages.
// Throws ConfigError "file:line:col: YAML syntax error: ..." for malformed input, non-scalar
// keys, more than one document, or input past the limits of config/limits.h (nesting depth,
// values with aliases expanded); an empty document gives a null node. A duplicate key throws
// too, unless `diag` is given: then each is recorded there and its later value dropped.
// Merge keys are expanded (`<<: *base` or `<<: [*a, *b]`, YAML 1.1): the map gets each merged
// key it does not give itself, an earlier map of a list winning over a later one; merged
// values keep the positions they are written at. A merge value other than a map or a list of
// maps throws.
YamlNodePtr parse_yaml(const std::string& text, const std::string& file,
                       Diagnostics* diag = nullptr);

// Returns the SourceLocation of `mark` with `key` filled in.
SourceLocation location_of(const YamlMark& mark, const std::string& key);

// Returns the node at dotted `path` below `root` ("plan.tensor_parallel"), or nullptr.
// If `entry_out` is non-null it receives the entry holding the node.
const YamlNode* find_path(const YamlNode& root, const std::string& path,
                          const YamlEntry** entry_out = nullptr);

}  // namespace trident

#endif  // TRIDENT_CONFIG_YAML_TREE_H_
