#include "platform/link_claims.h"

#include <algorithm>

namespace trident {
namespace {

// True when one of c's windows on `link` is still open at `now`.
bool open_on(const Claim& c, int link, double now) {
  return std::any_of(c.uses.begin(), c.uses.end(),
                     [&](const LinkUse& u) { return u.link == link && u.end > now; });
}

// True when a window of `c` on u.link overlaps `u`.
bool overlaps(const Claim& c, const LinkUse& u) {
  return std::any_of(c.uses.begin(), c.uses.end(), [&](const LinkUse& y) {
    return y.link == u.link && u.start < y.end && y.start < u.end;
  });
}

}  // namespace

void LinkClaims::begin_flow(const std::vector<int>& links, double now) {
  for (int l : links) {
    ++in_flight_[l];
    // Copy: interrupting unregisters from this very list.
    const std::vector<Claim*> on_link = claims_[l];
    for (Claim* c : on_link) {
      if (c->registered && open_on(*c, l, now)) interrupt(c, now);
    }
  }
}

void LinkClaims::end_flow(const std::vector<int>& links) {
  for (int l : links) --in_flight_[l];
}

bool LinkClaims::try_claim(Claim* c, double now) {
  c->interrupted_at = -1;
  for (const LinkUse& u : c->uses) {
    if (u.end <= now) continue;
    if (in_flight_[u.link] > 0) return false;
    for (const Claim* other : claims_[u.link]) {
      if (other != c && overlaps(*other, u)) return false;
    }
  }
  for (const LinkUse& u : c->uses) {
    std::vector<Claim*>& on_link = claims_[u.link];
    if (std::find(on_link.begin(), on_link.end(), c) == on_link.end()) on_link.push_back(c);
  }
  c->registered = true;
  return true;
}

void LinkClaims::release(Claim* c) {
  if (c->registered) unregister(c);
}

void LinkClaims::unregister(Claim* c) {
  for (const LinkUse& u : c->uses) {
    std::vector<Claim*>& on_link = claims_[u.link];
    on_link.erase(std::remove(on_link.begin(), on_link.end(), c), on_link.end());
  }
  c->registered = false;
}

void LinkClaims::interrupt(Claim* c, double now) {
  unregister(c);
  c->interrupted_at = now;
  ++interruptions_;
  if (c->wake) c->wake();
}

}  // namespace trident
