// Claims timed together (LinkClaims::share and share_group): flows of claims that meet on
// links, timed in closed form as max-min shares them, each claim retimed by its flow's delay.
#include <algorithm>
#include <cmath>
#include <limits>

#include "lowering/fluid_share.h"
#include "lowering/link_claims.h"

namespace trident {
namespace {

// The uses of `flow` end at `end`, its group at the later of that and its floor; every use
// that starts at or after the group's end before moves by as much as the group's end did.
void retime(std::vector<LinkUse>* uses, int flow, double end) {
  const LinkUse& f = (*uses)[flow];
  const double group_end = f.group_end, delay = std::max(end, group_end) - group_end;
  for (LinkUse& u : *uses) {
    if (u.flow == flow) {
      u.end = end;
      u.group_end = std::max(end, group_end);
    } else if (u.start >= group_end) {
      u.start += delay;
      u.end += delay;
      u.bw_start += delay;
      u.group_end += delay;
    }
  }
}

// Adds to c's warps what retime(flow, end) does to its timing: from `from` to `split` it moved
// `share` of its rate alone, then at that rate to `end`; its group's floor, if later, follows.
void warp(Claim* c, const LinkUse& f, double from, double split, double share, double end) {
  const double a = c->to_alone(from), a_end = c->to_alone(f.end);
  const double a_group = c->to_alone(f.group_end);
  // A flow shared before has its floor's warp last: it follows the new end.
  if (!c->warps.empty() && c->warps.back().floor && c->warps.back().r0 == f.end)
    c->warps.pop_back();
  c->warps.push_back({from, split, a, a + (split - from) * share});
  if (a_group > a_end) c->warps.push_back({end, std::max(end, f.group_end), a_end, a_group, true});
}

// True when a partner of `c` shares `flow` after `from`, or holds a flow whose uses start at or
// after `group_end` (retime would move it, and the pair's timing with it).
bool blocked(const Claim& c, int flow, double from, double group_end) {
  for (const Claim::Partner& p : c.partners) {
    if ((p.flow == flow && p.until > from) || c.uses[p.flow].start >= group_end) return true;
  }
  return false;
}

}  // namespace

bool LinkClaims::share(Claim* c, int fc, Claim* o, int fo, double now) {
  const LinkUse y = c->uses[fc];
  const LinkUse x = o->uses[fo];
  const double from = std::max({x.bw_start, y.bw_start, now});
  // A flow shares with one other at a time, and what a retime moves must not be shared.
  if (blocked(*o, fo, from, x.group_end) || blocked(*c, fc, from, y.group_end)) return false;
  // The tightest link the two flows share.
  double cap = std::numeric_limits<double>::infinity();
  for (const LinkUse& u : c->uses) {
    if (u.flow != fc) continue;
    for (const LinkUse& v : o->uses) {
      if (v.flow == fo && v.link == u.link) cap = std::min(cap, u.capacity);
    }
  }
  // Partners stop together while they share (interrupt); those that never do need not.
  double until = now;
  if (from < std::min(x.end, y.end) && x.rate + y.rate > cap) {
    // Max-min between two flows: equal shares of the tightest link, a flow capped at its rate
    // alone leaving the rest to the other.
    double rx = cap / 2, ry = cap / 2;
    if (x.rate <= rx) {
      rx = x.rate;
      ry = cap - rx;
    } else if (y.rate <= ry) {
      ry = y.rate;
      rx = cap - ry;
    }
    const double bx = (x.end - from) * x.rate, by = (y.end - from) * y.rate;
    const double tx = bx / rx, ty = by / ry;
    const double split = from + std::min(tx, ty);  // when one of them arrives
    const double x_end = tx <= ty ? split : split + (bx - (split - from) * rx) / x.rate;
    const double y_end = tx <= ty ? split + (by - (split - from) * ry) / y.rate : split;
    // Everything after each flow's group moves by its delay.
    std::vector<LinkUse> o_uses = o->uses;
    retime(&o_uses, fo, x_end);
    if (overlaps_others(o_uses, o, c)) return false;
    retime(&c->uses, fc, y_end);
    warp(o, x, from, split, rx / x.rate, x_end);
    warp(c, y, from, split, ry / y.rate, y_end);
    o->uses = std::move(o_uses);
    until = split;
  }
  c->partners.push_back({o, fc, fo, until});
  o->partners.push_back({c, fo, fc, until});
  ++shared_;
  return true;
}

bool LinkClaims::share_group(Claim* c, int fc, Claim* o, int fo, double now) {
  const double from = std::max({c->uses[fc].bw_start, o->uses[fo].bw_start, now});
  // The flows timed together: c's, o's and those timed with one of them past `from`.
  struct Member {
    Claim* k;
    int f;
  };
  std::vector<Member> group = {{c, fc}, {o, fo}};
  for (size_t i = 0; i < group.size(); ++i) {
    const Member m = group[i];
    for (const Claim::Partner& p : m.k->partners) {
      // Still moving bytes then: a newcomer may make it share with the others.
      if (p.flow != m.f || p.other->uses[p.other_flow].end <= from) continue;
      const auto in =
          std::find_if(group.begin(), group.end(), [&](const Member& g) { return g.k == p.other; });
      if (in == group.end()) {
        group.push_back({p.other, p.other_flow});
      } else if (in->f != p.other_flow) {
        return false;  // two flows of one claim
      }
    }
  }
  std::vector<FluidFlow> flows;
  for (const Member& m : group) {
    if (m.k != c) save(m.k);
    const LinkUse& u = m.k->uses[m.f];
    FluidFlow f;
    f.start = std::max(from, u.bw_start);
    f.rate = u.rate;
    // What it has left to move then: its alone time left at its rate alone.
    f.bytes = u.end > from ? std::max(0.0, (u.alone_end - m.k->to_alone(f.start)) * u.rate) : 0;
    for (const LinkUse& v : m.k->uses) {
      if (v.flow == m.f) f.links.push_back({v.link, v.capacity});
    }
    flows.push_back(std::move(f));
  }
  const FluidShare timed = fluid_share(flows);
  for (size_t i = 0; i < group.size(); ++i) {
    Claim* k = group[i].k;
    const int f = group[i].f;
    const LinkUse u = k->uses[f];
    if (flows[i].bytes <= 0) continue;  // arrived before they meet: unchanged
    for (const Claim::Partner& p : k->partners) {
      if (p.flow != f && k->uses[p.flow].start >= u.group_end) return false;  // would move
    }
    // Its warps up to its start here stand; from there on, its spans.
    const double s = flows[i].start;
    std::vector<Warp>& w = k->warps;
    while (!w.empty() && w.back().r0 >= s) w.pop_back();
    if (!w.empty() && w.back().r1 > s) {
      Warp& cut = w.back();
      cut.a1 = cut.a0 + (s - cut.r0) * (cut.a1 - cut.a0) / (cut.r1 - cut.r0);
      cut.r1 = s;
    }
    // The group's floor, in real time: fixed from the group's start (and a GEMM's), which
    // this flow's sharing does not move; the group's end once the flow has arrived by then.
    const double floor = u.group_end > u.end ? u.group_end : u.end;
    double a = k->to_alone(s);
    for (const FluidSpan& span : timed.spans[i]) {
      const double moved = (span.to - span.from) * span.rate / u.rate;
      if (span.rate < u.rate && span.to > span.from) {
        w.push_back({span.from, span.to, a, a + moved});
      }
      a += moved;
    }
    const double end = timed.end[i];
    const double group_end = std::max(end, floor);
    if (u.alone_group_end > u.alone_end) {
      w.push_back({end, group_end, u.alone_end, u.alone_group_end, true});
    }
    const double delay = group_end - u.group_end;
    if (delay < -1e-12 * std::abs(u.group_end)) return false;  // faster: not timed so
    for (LinkUse& v : k->uses) {
      if (v.flow == f) {
        v.end = end;
        v.group_end = group_end;
      } else if (v.start >= u.group_end) {
        v.start += delay;
        v.end += delay;
        v.bw_start += delay;
        v.group_end += delay;
      }
    }
  }
  // Every two of them are timed together; while one still moves bytes its partners depend on
  // it (interrupt), unless none was slowed.
  for (size_t i = 0; i < group.size(); ++i) {
    for (size_t j = i + 1; j < group.size(); ++j) {
      const Member& a = group[i];
      const Member& b = group[j];
      const double until = timed.slowed ? std::min(timed.end[i], timed.end[j]) : now;
      bool found = false;
      for (Claim::Partner& p : a.k->partners) {
        if (p.other == b.k && p.flow == a.f && p.other_flow == b.f) {
          p.until = std::max(p.until, until);
          found = true;
        }
      }
      for (Claim::Partner& p : b.k->partners) {
        if (p.other == a.k && p.flow == b.f && p.other_flow == a.f) {
          p.until = std::max(p.until, until);
        }
      }
      if (!found) {
        a.k->partners.push_back({b.k, a.f, b.f, until});
        b.k->partners.push_back({a.k, b.f, a.f, until});
      }
    }
  }
  for (const Member& m : group) {
    if (m.k != c && overlaps_others(m.k->uses, m.k, c)) return false;
  }
  ++shared_;
  return true;
}

}  // namespace trident
