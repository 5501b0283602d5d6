#include "platform/link_claims.h"

#include <algorithm>
#include <limits>

namespace trident {
namespace {

// True when one of c's windows on `link` is open at `now`; lowers *next to the start of each
// that opens later.
bool open_on(const Claim& c, int link, double now, double* next) {
  bool open = false;
  for (const LinkUse& u : c.uses) {
    if (u.link != link || u.end <= now) continue;
    if (u.start <= now) open = true;
    *next = std::min(*next, u.start);
  }
  return open;
}

bool overlap(const LinkUse& a, const LinkUse& b) {
  return a.link == b.link && a.start < b.end && b.start < a.end;
}

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

// True when `a`'s flow fa and `b`'s flow fb are timed together.
bool partnered(const Claim& a, int fa, const Claim* b, int fb) {
  return std::any_of(a.partners.begin(), a.partners.end(), [&](const Claim::Partner& p) {
    return p.other == b && p.flow == fa && p.other_flow == fb;
  });
}

// When c's run ends (its last window).
double claim_end(const Claim& c) {
  double end = 0;
  for (const LinkUse& u : c.uses) end = std::max(end, u.group_end);
  return end;
}

}  // namespace

double Claim::to_alone(double real) const {
  double a = real;
  for (const Warp& w : warps) {
    if (real < w.r0) break;
    a = real < w.r1 ? w.a0 + (real - w.r0) * (w.a1 - w.a0) / (w.r1 - w.r0) : w.a1 + (real - w.r1);
  }
  return a;
}

double Claim::pace(double real) const {
  for (const Warp& w : warps) {
    if (real < w.r0) break;
    if (real < w.r1) return (w.a1 - w.a0) / (w.r1 - w.r0);
  }
  return 1;
}

double Claim::to_real(double alone) const {
  double r = alone;
  for (const Warp& w : warps) {
    if (alone < w.a0) break;
    r = alone < w.a1 ? w.r0 + (alone - w.a0) * (w.r1 - w.r0) / (w.a1 - w.a0)
                     : w.r1 + (alone - w.a1);
  }
  return r;
}

void LinkClaims::begin_flow(const std::vector<int>& links, double now) {
  for (int l : links) {
    ++in_flight_[l];
    // Copy: interrupting unregisters from this very list.
    const std::vector<Claim*> on_link = claims_[l];
    for (Claim* c : on_link) {
      if (!c->registered) continue;
      double next = std::numeric_limits<double>::infinity();
      if (open_on(*c, l, now, &next)) {
        interrupt(c, now);
      } else if (next < c->check_at) {
        // Its window here opens later: if this flow is still in flight then, the claim stops.
        c->check_at = next;
        ++c->revisions;
        if (c->wake) c->wake();
      }
    }
  }
}

void LinkClaims::end_flow(const std::vector<int>& links) {
  for (int l : links) --in_flight_[l];
}

bool LinkClaims::try_claim(Claim* c, double now) {
  c->interrupted_at = -1;
  c->check_at = std::numeric_limits<double>::infinity();
  c->warps.clear();
  c->partners.clear();
  for (const LinkUse& u : c->uses) {
    if (u.start <= now && u.end > now && in_flight_[u.link] > 0) return false;
  }
  // Overlaps are timed away pair by pair, earliest first; the claims retimed so far (c
  // included) are kept as they were, to be put back if one overlap cannot be.
  std::vector<LinkUse> uses;
  std::vector<Claim> before;
  std::vector<Claim*> retimed;
  for (;;) {
    // The earliest overlap left: c's flow fc and other's flow fo.
    Claim* other = nullptr;
    int fc = -1, fo = -1;
    double first = 0;
    for (const LinkUse& u : c->uses) {
      if (u.end <= now) continue;
      for (Claim* o : claims_[u.link]) {
        if (o == c) continue;
        for (const LinkUse& y : o->uses) {
          if (!overlap(u, y) || partnered(*c, u.flow, o, y.flow)) continue;
          const double at = std::max(u.start, y.start);
          if (other == nullptr || at < first) {
            other = o;
            fc = u.flow;
            fo = y.flow;
            first = at;
          }
        }
      }
    }
    const bool shareable = fc >= 0 && fo >= 0;
    if (other == nullptr) break;
    if (shareable) {
      if (retimed.empty()) uses = c->uses;
      if (std::find(retimed.begin(), retimed.end(), other) == retimed.end()) {
        retimed.push_back(other);
        before.push_back(*other);
      }
      if (share(c, fc, other, fo, now)) continue;
    }
    for (size_t i = 0; i < retimed.size(); ++i) {
      retimed[i]->uses = std::move(before[i].uses);
      retimed[i]->warps = std::move(before[i].warps);
      retimed[i]->partners = std::move(before[i].partners);
    }
    if (!retimed.empty()) c->uses = std::move(uses);
    c->warps.clear();
    c->partners.clear();
    return false;
  }
  register_claim(c);
  next_check(c, now);
  for (size_t i = 0; i < retimed.size(); ++i) {
    if (claim_end(*retimed[i]) > claim_end(before[i])) {
      ++retimed[i]->revisions;
      if (retimed[i]->wake) retimed[i]->wake();
    }
  }
  return true;
}

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

bool LinkClaims::overlaps_others(const std::vector<LinkUse>& uses, const Claim* a,
                                 const Claim* b) const {
  for (const LinkUse& u : uses) {
    for (const Claim* o : claims_[u.link]) {
      if (o == a || o == b) continue;
      for (const LinkUse& y : o->uses) {
        if (overlap(u, y) && !partnered(*a, u.flow, o, y.flow)) return true;
      }
    }
  }
  return false;
}

void LinkClaims::next_check(Claim* c, double now) const {
  c->check_at = std::numeric_limits<double>::infinity();
  for (const LinkUse& u : c->uses) {
    if (u.start > now && in_flight_[u.link] > 0) c->check_at = std::min(c->check_at, u.start);
  }
}

void LinkClaims::check(Claim* c, double now) {
  for (const LinkUse& u : c->uses) {
    if (u.start <= now && u.end > now && in_flight_[u.link] > 0) {
      interrupt(c, now);
      return;
    }
  }
  next_check(c, now);
}

void LinkClaims::register_claim(Claim* c) {
  for (const LinkUse& u : c->uses) {
    std::vector<Claim*>& on_link = claims_[u.link];
    if (std::find(on_link.begin(), on_link.end(), c) == on_link.end()) on_link.push_back(c);
  }
  c->registered = true;
}

void LinkClaims::release(Claim* c) {
  if (c->registered) unregister(c);
}

void LinkClaims::unregister(Claim* c) {
  for (const LinkUse& u : c->uses) {
    std::vector<Claim*>& on_link = claims_[u.link];
    on_link.erase(std::remove(on_link.begin(), on_link.end(), c), on_link.end());
  }
  for (const Claim::Partner& p : c->partners) {
    std::vector<Claim::Partner>& theirs = p.other->partners;
    theirs.erase(std::remove_if(theirs.begin(), theirs.end(),
                                [c](const Claim::Partner& q) { return q.other == c; }),
                 theirs.end());
  }
  c->registered = false;
}

void LinkClaims::interrupt(Claim* c, double now) {
  // Its partners were timed with its flow: while they still share, they stop with it.
  std::vector<Claim*> with;
  for (const Claim::Partner& p : c->partners) {
    if (p.until > now) with.push_back(p.other);
  }
  unregister(c);
  c->interrupted_at = now;
  ++interruptions_;
  if (c->wake) c->wake();
  for (Claim* o : with) {
    if (o->registered) interrupt(o, now);
  }
}

}  // namespace trident
