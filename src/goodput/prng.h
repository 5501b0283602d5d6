// A small, portable pseudo-random generator for the goodput Monte Carlo: the same seed gives
// the same draws on every platform and standard library (std:: distributions do not).
#ifndef TRIDENT_GOODPUT_PRNG_H_
#define TRIDENT_GOODPUT_PRNG_H_

#include <cstdint>

namespace trident {

// Returns the next value of SplitMix64 (Steele, Lea, Flood 2014) from *state, advancing it.
std::uint64_t splitmix64(std::uint64_t* state);

// xoshiro256** (Blackman and Vigna 2018), its state seeded from SplitMix64 as its authors
// recommend.
class Prng {
 public:
  explicit Prng(std::uint64_t seed);
  // Returns the next 64 random bits.
  std::uint64_t next();
  // Returns a uniform double in [0, 1) with 53 random bits.
  double uniform();
  // Returns an exponential draw of mean `mean` (> 0) by inverse CDF: -mean ln(1 - u).
  double exponential(double mean);

 private:
  std::uint64_t s_[4];
};

}  // namespace trident

#endif  // TRIDENT_GOODPUT_PRNG_H_
