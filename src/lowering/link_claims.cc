#include "lowering/link_claims.h"

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

bool Claim::timed_with(int flow, const Claim* other, int other_flow) const {
  return std::any_of(partners.begin(), partners.end(), [&](const Partner& p) {
    return p.other == other && p.flow == flow && p.other_flow == other_flow;
  });
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
  for (LinkUse& u : c->uses) {
    if (u.start <= now && u.end > now && in_flight_[u.link] > 0) return false;
    u.alone_end = u.end;
    u.alone_group_end = u.group_end;
  }
  // Overlaps are timed away pair by pair (or group by group), earliest first; the claims
  // retimed so far (c included) are kept as they were, to be put back if one overlap cannot be.
  std::vector<LinkUse> uses;
  retimed_.clear();
  saved_.clear();
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
          if (!overlap(u, y) || c->timed_with(u.flow, o, y.flow)) continue;
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
      if (uses.empty()) uses = c->uses;
      save(other);
      if (share(c, fc, other, fo, now) || share_group(c, fc, other, fo, now)) continue;
    }
    for (size_t i = 0; i < retimed_.size(); ++i) {
      retimed_[i]->uses = std::move(saved_[i].uses);
      retimed_[i]->warps = std::move(saved_[i].warps);
      retimed_[i]->partners = std::move(saved_[i].partners);
    }
    if (!uses.empty()) c->uses = std::move(uses);
    c->warps.clear();
    c->partners.clear();
    return false;
  }
  register_claim(c);
  next_check(c, now);
  for (size_t i = 0; i < retimed_.size(); ++i) {
    if (claim_end(*retimed_[i]) > claim_end(saved_[i])) {
      ++retimed_[i]->revisions;
      if (retimed_[i]->wake) retimed_[i]->wake();
    }
  }
  return true;
}

void LinkClaims::save(Claim* k) {
  if (std::find(retimed_.begin(), retimed_.end(), k) != retimed_.end()) return;
  retimed_.push_back(k);
  saved_.push_back(*k);
}

bool LinkClaims::overlaps_others(const std::vector<LinkUse>& uses, const Claim* a,
                                 const Claim* b) const {
  for (const LinkUse& u : uses) {
    for (const Claim* o : claims_[u.link]) {
      if (o == a || o == b) continue;
      for (const LinkUse& y : o->uses) {
        if (overlap(u, y) && !a->timed_with(u.flow, o, y.flow)) return true;
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
