// Parameter all-gathers ahead of the compute (lowering/param_gathers): Megatron-Core's buckets
// in reverse order gathered in forward order, and FSDP's per-layer gathers.
#include <catch2/catch.hpp>

#include "lowering/param_gathers.h"
#include "test_support.h"

using namespace trident;
using namespace trident::testing;

namespace {

// A chunk of `layers` layers of `per_layer` parameters each, one forward and one backward
// segment per layer.
StageWork stage(int layers, double per_layer) {
  StageWork st;
  st.chunks.resize(1);
  for (int l = 0; l < layers; ++l) {
    Segment f;
    f.compute_s = 1;
    f.weight_params = per_layer;
    st.chunks[0].forward.segments.push_back(f);
    Segment b;
    b.compute_s = 2;
    b.grad_params = per_layer;
    st.chunks[0].backward.segments.push_back(b);
  }
  return st;
}

}  // namespace

TEST_CASE("buckets close in backward order; the first layers' bucket is the remainder",
          "[param_gathers]") {
  // 5 layers of 10 parameters, buckets of 20: backward fills [L4 L3] [L2 L1] [L0]; forward
  // gathers [L0] first, then [L1 L2], then [L3 L4].
  const GatherSchedule g = bucket_gathers(stage(5, 10), 20);
  REQUIRE(g.unit_params.size() == 3);
  CHECK(g.unit_params[0] == 10);
  CHECK(g.unit_params[1] == 20);
  CHECK(g.unit_params[2] == 20);
  REQUIRE(g.waits.size() == 1);
  CHECK(g.waits[0] == std::vector<int>{0, 1, 1, 2, 2});
}

TEST_CASE("a bucket as large as the chunk is gathered before its first layer", "[param_gathers]") {
  const GatherSchedule g = bucket_gathers(stage(3, 10), 1e9);
  CHECK(g.unit_params == std::vector<double>{30});
  CHECK(g.waits[0] == std::vector<int>{0, 0, 0});
}

TEST_CASE("sharded weights are gathered once per layer, in pass order", "[param_gathers]") {
  Pass pass = stage(3, 10).chunks[0].forward;
  pass.segments.insert(pass.segments.begin() + 1, Segment{});  // a segment needing no weights
  const GatherSchedule g = layer_gathers(pass);
  CHECK(g.unit_params == std::vector<double>{10, 10, 10});
  CHECK(g.waits[0] == std::vector<int>{0, -1, 1, 2});
}
