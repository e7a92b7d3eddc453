// An exact time integral of a resource level: resource nano-units x
// nanoseconds as one signed 256-bit integer, nothing rounded until printed.
// A level reaches 2^127 nano-units (Quantity's range) and a period 2^64 ns
// (the ledger's time range), so an integral needs up to 2^191; __int128
// wrapped (128Ti of memory for 30 days printed 2.0e19 quota-seconds instead
// of 3.6e20). Boost's checked_int256_t throws std::overflow_error rather
// than wrap, which these bounds never reach.
//
// Integrals of adjacent periods add up to the integral of their union to the
// last nano-unit-nanosecond, which is what lets usage rollups
// (replay/kueue/usage_rollups.h) answer for any period exactly.
//
// A value type; thread-compatible. fromRollup throws ReplayError on bytes
// that are not an integral.
#pragma once

#include <cstdint>
#include <string>

#include <boost/multiprecision/cpp_int.hpp>

#include "schema/k8s/quantity.h"
#include "schema/rollup.capnp.h"

namespace ledger::replay {

// Signed 256-bit, checked (see above); header-only Boost.Multiprecision.
using Int256 = boost::multiprecision::checked_int256_t;

class Integral {
 public:
  // Adds `level` held for `durationNs` (nothing when durationNs <= 0).
  void add(const Quantity& level, std::int64_t durationNs);
  Integral& operator+=(const Integral& other);
  // The integral of a period less that of a part of it (usage_rollups.cpp
  // takes a partial hour as its stored hour less the rest).
  Integral& operator-=(const Integral& other);
  friend bool operator==(const Integral&, const Integral&) = default;

  // Nano-unit-seconds, truncated toward zero.
  Int256 nanoUnitSeconds() const;
  const Int256& nanoUnitNanoseconds() const { return total_; }
  // Resource-seconds as an exact decimal (nine digits), and resource-hours
  // (divided by `divisor`, e.g. 2^30 for GiB) rounded half away from zero at
  // six digits; both from the whole nano-unit-seconds.
  std::string seconds() const;
  std::string hours(Int128 divisor = 1) const;
  // The mean level over `periodNs` (> 0) in resource units, nine digits.
  std::string meanOver(std::int64_t periodNs) const;
  bool isZero() const { return total_ == 0; }

  void toRollup(schema::Integral::Builder out) const;
  static Integral fromRollup(schema::Integral::Reader in);

 private:
  Int256 total_ = 0;  // nano-units x ns
};

// value / scale with `digits` decimals, rounded half away from zero; scale > 0.
std::string exactDecimal(Int256 value, const Int256& scale, int digits);

}  // namespace ledger::replay
