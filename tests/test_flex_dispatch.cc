// The flex (DeepEP) dispatcher without SimGrid: the chance a token's top-k experts reach a GPU
// or a node, against a brute-force enumeration of the routings, and the lowering's bytes
// against those chances.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <vector>

#include "lowering/flex_dispatch.h"
#include "workload/expert_routing.h"

using namespace trident;

namespace {

// Calls f(subset) for every k-subset of `items`.
template <typename F>
void for_each_subset(const std::vector<int>& items, int k, F f) {
  std::vector<int> idx(k);
  for (int i = 0; i < k; ++i) idx[i] = i;
  const int n = static_cast<int>(items.size());
  while (true) {
    std::vector<int> s(k);
    for (int i = 0; i < k; ++i) s[i] = items[idx[i]];
    f(s);
    int i = k - 1;
    while (i >= 0 && idx[i] == n - k + i) --i;
    if (i < 0) return;
    ++idx[i];
    for (int j = i + 1; j < k; ++j) idx[j] = idx[j - 1] + 1;
  }
}

// The chance, over every equally likely routing (g groups of G, then k of their experts),
// that a token reaches one of `unit`.
double brute_force_hit(const ExpertRouting& r, const std::vector<int>& unit) {
  const int G = r.groups > 1 ? r.groups : 1, g = r.groups > 1 ? r.group_topk : 1;
  const int size = r.experts / G;
  std::vector<int> all_groups(G);
  for (int i = 0; i < G; ++i) all_groups[i] = i;
  double hits = 0, total = 0;
  for_each_subset(all_groups, g, [&](const std::vector<int>& chosen) {
    std::vector<int> pool;
    for (int c : chosen) {
      for (int e = c * size; e < (c + 1) * size; ++e) pool.push_back(e);
    }
    // Each group subset is equally likely, then each k-subset of its experts.
    double ways = 0, hit = 0;
    for_each_subset(pool, r.topk, [&](const std::vector<int>& experts) {
      ways += 1;
      for (int e : experts) {
        if (std::find(unit.begin(), unit.end(), e) != unit.end()) {
          hit += 1;
          break;
        }
      }
    });
    hits += hit / ways;
    total += 1;
  });
  return hits / total;
}

}  // namespace

TEST_CASE("a token's distinct GPUs and nodes match a brute-force enumeration", "[moe][flex]") {
  // No group limit: 12 experts, top-3; GPUs of 3 experts, nodes of 6.
  ExpertRouting free{12, 3, 0, 0};
  for (int per : {1, 3, 6}) {
    INFO("block of " << per);
    const double p = routing_hit_probability(free, expert_block(0, per));
    CHECK(p == Approx(brute_force_hit(free, expert_block(0, per))).epsilon(1e-12));
    // The hypergeometric closed form: 1 - C(E - u, k) / C(E, k).
    const double closed = 1 - std::tgamma(12 - per + 1) / std::tgamma(12 - per - 3 + 1) /
                                  (std::tgamma(13) / std::tgamma(10));
    CHECK(p == Approx(closed).epsilon(1e-12));
    CHECK(expected_distinct_units(free, 12 / per) == Approx(12 / per * p).epsilon(1e-12));
  }
  // Group-limited: 16 experts in 4 groups of 4, 2 groups per token, top-3 of their 8
  // experts. GPUs of 2 experts (inside a group), nodes of 8 (two groups), and a block that
  // straddles groups 0 and 1.
  ExpertRouting grouped{16, 3, 4, 2};
  const std::vector<std::vector<int>> units = {expert_block(0, 2), expert_block(6, 2),
                                               expert_block(0, 8), expert_block(8, 8),
                                               expert_block(2, 5), {1, 5, 9, 13}};
  for (const std::vector<int>& u : units) {
    INFO("unit from " << u.front() << ", " << u.size() << " experts");
    CHECK(routing_hit_probability(grouped, u) ==
          Approx(brute_force_hit(grouped, u)).epsilon(1e-12));
  }
  double nodes = 0;
  for (int i = 0; i < 2; ++i) nodes += brute_force_hit(grouped, expert_block(8 * i, 8));
  CHECK(expected_distinct_units(grouped, 2) == Approx(nodes).epsilon(1e-12));
}

TEST_CASE("DeepSeek-V3's node-limited routing reaches at most 4 of 8 nodes", "[moe][flex]") {
  // 256 experts in 8 groups (one per node at EP 64 over 8 nodes), 4 groups, top-8: a node is
  // reached only when its group is picked (1/2), then unless all 8 experts fall in the other
  // 3 picked groups: 8 x 1/2 x (1 - C(96, 8) / C(128, 8)).
  const ExpertRouting v3{256, 8, 8, 4};
  double miss = 1;
  for (int i = 0; i < 8; ++i) miss *= (96.0 - i) / (128.0 - i);
  const double nodes = expected_distinct_units(v3, 8);
  CHECK(nodes == Approx(8 * 0.5 * (1 - miss)).epsilon(1e-12));
  CHECK(nodes < 4);
  // Without the limit a token reaches more nodes, and its experts more distinct GPUs than
  // nodes, never more than k.
  const ExpertRouting free{256, 8, 0, 0};
  CHECK(expected_distinct_units(free, 8) > nodes);
  CHECK(expected_distinct_units(v3, 64) > nodes);
  CHECK(expected_distinct_units(v3, 64) < 8);
  CHECK(expected_distinct_units(v3, 256) == Approx(8).epsilon(1e-12));
}

TEST_CASE("the flex lowering sends a token once per node over RDMA and once per GPU",
          "[moe][flex]") {
  // EP 16 over two islands of 8: 64 experts, top-6.
  const ExpertRouting r{64, 6, 0, 0};
  std::vector<int> g(16);
  for (int i = 0; i < 16; ++i) g[i] = 100 + i;
  const auto island_of = [](int gpu) { return (gpu - 100) / 8; };
  const double B = 1e6;
  const std::vector<Phase> ph = lower_flex_dispatch({g}, B, r, 1, false, island_of);
  REQUIRE(ph.size() == 1);
  const double pg = routing_hit_probability(r, expert_block(0, 4));
  const double pn = routing_hit_probability(r, expert_block(0, 32));
  std::map<int, double> nic_out, nvl_out, nvl_in;
  for (const Flow& f : ph[0].flows) {
    if (island_of(f.src) != island_of(f.dst)) {
      // RDMA only between GPUs of the same local index.
      CHECK((f.src - 100) % 8 == (f.dst - 100) % 8);
      nic_out[f.src] += f.bytes;
    } else {
      nvl_out[f.src] += f.bytes;
      nvl_in[f.dst] += f.bytes;
    }
  }
  // 16 RDMA flows (one per source to the other island) and 2 x 8 x 7 NVLink pairs.
  CHECK(ph[0].flows.size() == 16 + 2 * 8 * 7);
  for (int gpu : g) {
    CHECK(nic_out[gpu] == Approx(B * pn).epsilon(1e-12));
    // Its own tokens to the 7 others of its island, and those it forwards for its peer in
    // the other island: n (c - 1) p_g token bytes.
    CHECK(nvl_out[gpu] == Approx(B * 2 * 7 * pg).epsilon(1e-12));
    CHECK(nvl_in[gpu] == Approx(B * 2 * 7 * pg).epsilon(1e-12));
  }
  // The combine is the transpose; imbalance sends more to member 0 and keeps each chance <= 1.
  const std::vector<Phase> back = lower_flex_dispatch({g}, B, r, 1, true, island_of);
  REQUIRE(back.size() == 1);
  CHECK(back[0].flows.size() == ph[0].flows.size());
  CHECK(back[0].flows.front().src == ph[0].flows.front().dst);
  const std::vector<Phase> hot = lower_flex_dispatch({g}, B, r, 3, false, island_of);
  double to0 = 0, to1 = 0;
  for (const Flow& f : hot[0].flows) {
    if (f.dst == 100) to0 += f.bytes;
    if (f.dst == 101) to1 += f.bytes;
    CHECK(f.bytes <= B * 2);  // a token at most once per pair (forwarder: own + one peer's)
  }
  CHECK(to0 > to1);
}

TEST_CASE("DeepEP's accounting counts a token once per node and once per GPU, own included",
          "[moe][flex]") {
  const ExpertRouting r{256, 8, 0, 0};
  std::vector<int> g(16);
  for (int i = 0; i < 16; ++i) g[i] = i;
  const auto island_of = [](int gpu) { return gpu / 8; };
  const DeepEpBytes b = deepep_bytes(g, 1, r, island_of);
  CHECK(b.rdma == Approx(expected_distinct_units(r, 2)).epsilon(1e-12));
  CHECK(b.nvlink == Approx(expected_distinct_units(r, 16)).epsilon(1e-12));
}

TEST_CASE("the collapsed flex lowering loads every port with its busier direction's bytes",
          "[moe][flex][shortcut]") {
  // DeepSeek-V3's EP 64 over 8 islands (256 experts, top-8 from 4 of 8 node groups), balanced
  // and with member 0 hot; a dispatch and its combine.
  const ExpertRouting r{256, 8, 8, 4};
  std::vector<int> g(64);
  for (int i = 0; i < 64; ++i) g[i] = 64 + i;
  const auto island_of = [](int gpu) { return gpu / 8; };
  for (double load : {1.0, 1.6}) {
    for (bool combine : {false, true}) {
      INFO("load " << load << (combine ? " combine" : " dispatch"));
      const std::vector<Phase> pairs = lower_flex_dispatch({g}, 1e6, r, load, combine, island_of);
      const std::vector<Phase> one =
          lower_flex_dispatch_collapsed({g}, 1e6, r, load, combine, island_of);
      REQUIRE(pairs.size() == 1);
      REQUIRE(one.size() == 1);
      CHECK(pairs[0].flows.size() == 896);
      CHECK(one[0].flows.size() == 128);  // one loopback and one ring flow per member
      // Per GPU: bytes out of and into its NIC and its NVLink port, per lowering.
      struct Ports {
        std::map<int, double> nic_out, nic_in, nvl_out, nvl_in;
      };
      const auto ports = [&](const Phase& ph) {
        Ports p;
        for (const Flow& f : ph.flows) {
          const bool nic = f.src == f.dst || island_of(f.src) != island_of(f.dst);
          (nic ? p.nic_out : p.nvl_out)[f.src] += f.bytes;
          (nic ? p.nic_in : p.nvl_in)[f.dst] += f.bytes;
        }
        return p;
      };
      Ports a = ports(pairs[0]), b = ports(one[0]);
      double busiest_nic = 0, busiest_nvl = 0, busiest_nic_one = 0, busiest_nvl_one = 0;
      for (int gpu : g) {
        // The loopback carries the larger direction; each ring flow at least what its two
        // ports carry per pair.
        CHECK(b.nic_out.at(gpu) == Approx(std::max(a.nic_out[gpu], a.nic_in[gpu])));
        CHECK(b.nvl_out.at(gpu) >= a.nvl_out[gpu] * (1 - 1e-12));
        CHECK(b.nvl_in.at(gpu) >= a.nvl_in[gpu] * (1 - 1e-12));
        busiest_nic = std::max({busiest_nic, a.nic_out[gpu], a.nic_in[gpu]});
        busiest_nvl = std::max({busiest_nvl, a.nvl_out[gpu], a.nvl_in[gpu]});
        busiest_nic_one = std::max(busiest_nic_one, b.nic_out.at(gpu));
        busiest_nvl_one = std::max({busiest_nvl_one, b.nvl_out.at(gpu), b.nvl_in.at(gpu)});
      }
      // The busiest port, which ends the phase alone, carries the same bytes either way.
      CHECK(busiest_nic_one == Approx(busiest_nic).epsilon(1e-12));
      CHECK(busiest_nvl_one == Approx(busiest_nvl).epsilon(1e-12));
    }
  }
}
