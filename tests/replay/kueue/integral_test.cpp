#include "replay/kueue/integral.h"

#include <capnp/message.h>
#include <catch2/catch.hpp>

#include <random>

namespace ledger::replay {
namespace {

// The definition, in 256 bits throughout: value / scale with `digits`
// decimals, rounded half away from zero.
std::string reference(Int256 value, const Int256& scale, int digits) {
  const bool negative = value < 0;
  if (negative) value = -value;
  Int256 pow = 1;
  for (int i = 0; i < digits; ++i) pow *= 10;
  const Int256 scaled = (value * pow + scale / 2) / scale;
  std::string out = negative ? "-" : "";
  out += Int256(scaled / pow).str();
  if (digits > 0) {
    std::string f = Int256(scaled % pow).str();
    out += "." + std::string(static_cast<std::size_t>(digits) - f.size(), '0') + f;
  }
  return out;
}

Int256 randomBits(std::mt19937_64& rng, int bits) {
  Int256 v = 0;
  for (int b = 0; b < bits; b += 64) v = (v << 64) | Int256(rng());
  return bits == 0 ? Int256(0) : Int256(v & ((Int256(1) << bits) - 1));
}

}  // namespace

TEST_CASE("exactDecimal: the 128-bit path prints the digits of the 256-bit definition", "[usage]") {
  std::mt19937_64 rng(42);
  // Magnitudes on both sides of the fast path's bounds (2^126 for the
  // value, 2^96 for the scale), every digit count the callers use.
  for (int i = 0; i < 20000; ++i) {
    const int valueBits = static_cast<int>(rng() % 192);
    const int scaleBits = 1 + static_cast<int>(rng() % 110);
    const int digits = static_cast<int>(rng() % 10);
    Int256 value = randomBits(rng, valueBits);
    if (rng() % 2 == 1) value = -value;
    Int256 scale = randomBits(rng, scaleBits);
    if (scale == 0) scale = 1;
    INFO(value.str() << " / " << scale.str() << " digits " << digits);
    REQUIRE(exactDecimal(value, scale, digits) == reference(value, scale, digits));
  }
}

TEST_CASE("exactDecimal: rounding carries into the whole part; halves round away from zero",
          "[usage]") {
  CHECK(exactDecimal(Int256(19999999995), 10000000000, 9) == "2.000000000");
  CHECK(exactDecimal(Int256(-19999999995), 10000000000, 9) == "-2.000000000");
  CHECK(exactDecimal(Int256(5), 10, 0) == "1");
  CHECK(exactDecimal(Int256(-5), 10, 0) == "-1");
  CHECK(exactDecimal(Int256(4), 10, 0) == "0");
  CHECK(exactDecimal(Int256(1), 3, 9) == "0.333333333");
  CHECK(exactDecimal(Int256(2), 3, 9) == "0.666666667");
  // A whole part above 2^64, and above 2^126 (the 256-bit path).
  CHECK(exactDecimal(Int256(1) << 100, 1, 2) == "1267650600228229401496703205376.00");
  CHECK(exactDecimal(Int256(1) << 130, 1, 0) == "1361129467683753853853498429727072845824");
}

TEST_CASE("Integral: a rollup round trip keeps every bit, small and large", "[usage]") {
  for (const Int256& v :
       {Int256(0), Int256(1), Int256(-1), Int256(255), Int256(256), (Int256(1) << 127) - 1,
        Int256(1) << 127, -(Int256(1) << 128), (Int256(1) << 185) + 12345}) {
    capnp::MallocMessageBuilder message;
    auto root = message.initRoot<schema::Integral>();
    // Built as a level held 2^62 ns plus the rest held 1 ns.
    const Int256 magnitude = v < 0 ? Int256(-v) : v;
    const Int256 unit = Int256(1) << 62;
    const auto high = static_cast<Int128>(magnitude / unit);
    const auto low = static_cast<Int128>(magnitude % unit);
    Integral built;
    built.add(Quantity::fromNanos(v < 0 ? -high : high), std::int64_t{1} << 62);
    built.add(Quantity::fromNanos(v < 0 ? -low : low), 1);
    REQUIRE(built.nanoUnitNanoseconds() == v);
    built.toRollup(root);
    CHECK(Integral::fromRollup(root.asReader()) == built);
  }
}

}  // namespace ledger::replay
