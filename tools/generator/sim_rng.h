// The simulation's only source of randomness: xoshiro256** seeded through
// splitmix64, with integer-only uniform draws. The standard library's
// distributions are implementation-defined, so they would break the promise
// that the same seed gives the same bytes on every build; these do not.
//
// Thread safety: none (one generator per simulation). Never throws.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <string>

namespace ledger::gen {

class SimRng {
 public:
  explicit SimRng(std::uint64_t seed) {
    for (auto& s : state_) s = splitmix(seed);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform in [0, n); n > 0. Lemire's multiply-shift (bias below 2^-64 * n).
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<Wide>(next()) * n) >> 64);
  }
  // Uniform in [lo, hi].
  std::int64_t between(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(hi - lo) + 1));
  }
  // Uniform in [0, 1) with 53 bits.
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  bool chance(double p) { return unit() < p; }
  // Exponentially distributed with the given mean (Poisson arrivals, run times).
  double exponential(double mean) { return -mean * std::log1p(-unit()); }

  // A random (version 4) UUID, as the API server assigns metadata.uid.
  std::string uuid() {
    static constexpr char kHex[] = "0123456789abcdef";
    const std::uint64_t a = next();
    const std::uint64_t b = next();
    std::string out;
    out.reserve(36);
    for (int i = 0; i < 32; ++i) {
      const std::uint64_t word = i < 16 ? a : b;
      unsigned nibble = static_cast<unsigned>((word >> ((i % 16) * 4)) & 0xF);
      if (i == 12) nibble = 4;                   // version
      if (i == 16) nibble = 8 | (nibble & 0x3);  // variant
      if (i == 8 || i == 12 || i == 16 || i == 20) out.push_back('-');
      out.push_back(kHex[nibble]);
    }
    return out;
  }

  // A generateName suffix: the API server's alphabet without vowels and
  // look-alike characters.
  std::string suffix(int length = 5) {
    static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    std::string out;
    for (int i = 0; i < length; ++i) out.push_back(kAlphabet[below(sizeof(kAlphabet) - 1)]);
    return out;
  }

 private:
  __extension__ typedef unsigned __int128 Wide;  // GCC/Clang; ISO C++ has no 128-bit type

  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static std::uint64_t splitmix(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  std::array<std::uint64_t, 4> state_{};
};

}  // namespace ledger::gen
