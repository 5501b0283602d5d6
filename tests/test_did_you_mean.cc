// Did-you-mean suggestions for misspelt keys (config/did_you_mean).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config/did_you_mean.h"
#include "config_support.h"

using namespace trident;
using namespace trident::testing;

TEST_CASE("did-you-mean suggestions", "[config]") {
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
  const std::vector<std::string> keys = {"nodes", "gpus_per_node", "nvlink", "network"};
  CHECK(closest_match("nodez", keys) == "nodes");
  CHECK(closest_match("gpus_per_nodes", keys) == "gpus_per_node");
  CHECK(closest_match("Network", keys) == "network");
  CHECK(closest_match("banana", keys).empty());
  CHECK_THAT(suggestion("banana", keys), Catch::StartsWith("expected one of: nodes,"));
}
