// JSON trees (config/json_tree): positions kept, duplicates and malformed input refused.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config/json_tree.h"
#include "config_support.h"

using namespace trident;
using namespace trident::testing;

TEST_CASE("JSON trees keep positions and refuse duplicates", "[validate][json]") {
  const YamlNodePtr root = parse_json(
      "{\n  \"a\": [1, -2.5e3, \"x\\\"y\"],\n  \"b\": {\"c\": true, \"d\": null}\n}", "t.json");
  REQUIRE(root->is_map());
  const YamlNode* a = find_path(*root, "a");
  REQUIRE(a->is_sequence());
  CHECK(a->mark.line == 2);
  CHECK(a->mark.column == 8);
  CHECK(a->items[1]->scalar == "-2.5e3");
  CHECK(a->items[1]->mark.column == 12);
  CHECK(a->items[2]->scalar == "x\"y");
  CHECK(a->items[2]->quoted);
  CHECK(a->items[2]->mark.column == 20);
  CHECK(find_path(*root, "b.c")->scalar == "true");
  CHECK(find_path(*root, "b.d")->is_null());
  const YamlEntry* entry = nullptr;
  find_path(*root, "b.c", &entry);
  CHECK(entry->key_mark.line == 3);
  CHECK(entry->key_mark.column == 9);
  CHECK_THROWS_WITH(parse_json("{\"a\": 1, \"a\": 2}", "d.json"),
                    Catch::Contains("d.json:1:10: a: duplicate key"));
  CHECK_THROWS_WITH(parse_json("{\"a\": 1,\n \"b\" 2}", "s.json"),
                    Catch::StartsWith("s.json:2:6: JSON syntax error: "));
  CHECK_THROWS_WITH(parse_json("{\"a\": NaN}", "n.json"),
                    Catch::StartsWith("n.json:1:7: JSON syntax error"));
  CHECK_THROWS_WITH(parse_json(std::string(100, '[') + std::string(100, ']'), "deep.json"),
                    Catch::Contains("nested more than 64 levels"));
  CHECK_THROWS_WITH(parse_json("", "e.json"), Catch::Contains("unexpected end of input"));
}
