// YAML trees (config/yaml_tree): positions, quoting, aliases, and duplicate keys refused.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config/yaml_tree.h"
#include "config_support.h"

using namespace trident;
using namespace trident::testing;

TEST_CASE("duplicate keys are refused with both lines", "[config][yaml]") {
  try {
    parse_yaml("a: 1\nb: 2\na: 3\n", "d.yaml");
    FAIL("duplicate accepted");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) ==
          "d.yaml:3:1: a: duplicate key (first given at line 1; remove one)");
  }
}

TEST_CASE("YAML trees keep positions, quoting and aliases", "[config][yaml]") {
  YamlNodePtr root = parse_yaml("x: &a {k: \"8\"}\ny: *a\nz:\n  - 1\n", "t.yaml");
  REQUIRE(root->is_map());
  const YamlNode* k = find_path(*root, "y.k");
  REQUIRE(k != nullptr);
  CHECK(k->quoted);
  CHECK(k->scalar == "8");
  const YamlNode* z = find_path(*root, "z");
  REQUIRE(z->is_sequence());
  CHECK(z->items[0]->mark.line == 4);
  CHECK(z->items[0]->mark.column == 5);
  CHECK(parse_yaml("", "e.yaml")->is_null());
  CHECK_THROWS_AS(parse_yaml("a: [1, 2\n", "s.yaml"), ConfigError);
  CHECK_THROWS_AS(parse_yaml("a: 1\n---\nb: 2\n", "m.yaml"), ConfigError);
}

TEST_CASE("merge keys: merged maps fill in, explicit keys win, positions stay", "[config][yaml]") {
  YamlNodePtr root = parse_yaml(
      "base: &b {t: 8, p: 4, d: 2}\n"
      "more: &m {d: 16, s: 1f1b}\n"
      "plan:\n"
      "  p: 2\n"
      "  <<: [*b, *m]\n"
      "  extra: 1\n",
      "m.yaml");
  const YamlNode* plan = find_path(*root, "plan");
  REQUIRE(plan != nullptr);
  std::vector<std::string> keys;
  for (const YamlEntry& e : plan->entries) keys.push_back(e.key);
  // In place of `<<`; the map's own p wins, and the first merged map wins over the second.
  CHECK(keys == std::vector<std::string>{"p", "t", "d", "s", "extra"});
  CHECK(find_path(*root, "plan.p")->scalar == "2");
  CHECK(find_path(*root, "plan.t")->scalar == "8");
  CHECK(find_path(*root, "plan.d")->scalar == "2");
  CHECK(find_path(*root, "plan.s")->scalar == "1f1b");
  // A merged value is located where it is written: the anchored map on line 1.
  CHECK(find_path(*root, "plan.t")->mark.line == 1);
  CHECK(find_path(*root, "plan.t")->mark.column == 14);
  // One map, block style; a key after `<<` overrides it too; a quoted '<<' is a plain key.
  root = parse_yaml("a: &a\n  x: 1\n  y: 2\nb:\n  <<: *a\n  x: 3\nc: {'<<': 1}\n", "m.yaml");
  CHECK(find_path(*root, "b.x")->scalar == "3");
  CHECK(find_path(*root, "b.y")->scalar == "2");
  REQUIRE(find_path(*root, "c.<<") != nullptr);
  CHECK(find_path(*root, "c.<<")->scalar == "1");
}

TEST_CASE("merge keys: a value that is not a map, and two merge keys, are refused",
          "[config][yaml]") {
  CHECK_THROWS_WITH(parse_yaml("a:\n  <<: 3\n", "m.yaml"),
                    "m.yaml:2:7: the merge key `<<` takes a map or a list of maps (such as "
                    "*defaults), got the value `3`");
  CHECK_THROWS_WITH(parse_yaml("x: &x {k: 1}\na:\n  <<: [*x, 4]\n", "m.yaml"),
                    Catch::StartsWith("m.yaml:3:12: the merge key"));
  CHECK_THROWS_WITH(parse_yaml("x: &x {k: 1}\na:\n  <<: *x\n  <<: *x\n", "m.yaml"),
                    "m.yaml:4:3: a.<<: duplicate key (first given at line 3; remove one)");
}
