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
