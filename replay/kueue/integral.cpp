#include "replay/kueue/integral.h"

#include <charconv>
#include <iterator>
#include <vector>

#include "replay/fold/replayer.h"

namespace ledger::replay {

namespace {

constexpr std::int64_t kBillion = 1000000000;

Int256 pow10(int digits) {
  Int256 pow = 1;
  for (int i = 0; i < digits; ++i) pow *= 10;
  return pow;
}

// The largest magnitude an integral can hold without overflowing what
// printing multiplies it by: 2^250 bytes are 32, so more is not an integral.
constexpr std::size_t kMaxMagnitudeBytes = 32;

}  // namespace

std::string exactDecimal(Int256 value, const Int256& scale, int digits) {
  // The same digits in 128 bits when everything fits: a series prints
  // hundreds of thousands of values, and Boost's 256-bit division was most
  // of that. value = q * scale + r, so value * pow / scale rounded is
  // q * pow + (r * pow + scale / 2) / scale, and r < scale < 2^96 keeps
  // r * pow (pow <= 10^9 < 2^30) below 2^126.
  static const Int256 kValueBound = Int256(1) << 126;
  static const Int256 kScaleBound = Int256(1) << 96;
  if (digits >= 0 && digits <= 9 && value < kValueBound && value > -kValueBound &&
      scale < kScaleBound) {
    __extension__ using I128 = __int128;
    const I128 v = static_cast<I128>(value < 0 ? Int256(-value) : value);
    const I128 sc = static_cast<I128>(scale);
    I128 pow = 1;
    for (int i = 0; i < digits; ++i) pow *= 10;
    const I128 fraction = (v % sc * pow + sc / 2) / sc;  // at most pow
    const I128 whole = v / sc + fraction / pow;
    // Digits through to_chars: below 2^64 (nearly always) no 128-bit
    // division per digit. Above, the last digits are peeled off first.
    auto append = [](std::string& out, I128 n, std::size_t width) {
      char tail[48];
      char* const tailEnd = tail + sizeof tail;
      char* t = tailEnd;
      while (n > static_cast<I128>(UINT64_MAX)) {
        *--t = static_cast<char>('0' + static_cast<int>(n % 10));
        n /= 10;
      }
      char head[24];
      const auto r = std::to_chars(head, head + sizeof head, static_cast<std::uint64_t>(n));
      const auto count = static_cast<std::size_t>((r.ptr - head) + (tailEnd - t));
      if (count < width) out.append(width - count, '0');
      out.append(head, r.ptr);
      out.append(t, tailEnd);
    };
    std::string out;
    if (value < 0) out.push_back('-');
    append(out, whole, 0);
    if (digits > 0) {
      out.push_back('.');
      append(out, fraction % pow, static_cast<std::size_t>(digits));
    }
    return out;
  }
  const bool negative = value < 0;
  if (negative) value = -value;
  const Int256 pow = pow10(digits);
  const Int256 scaled = (value * pow + scale / 2) / scale;
  // Appended, not `"-" + text`: GCC 12 warns (-Wrestrict, a false positive)
  // on that operator+ when optimising.
  std::string out;
  if (negative) out.push_back('-');
  out += Int256(scaled / pow).str();
  if (digits > 0) {
    std::string f = Int256(scaled % pow).str();
    f.insert(f.begin(), static_cast<std::size_t>(digits) - f.size(), '0');
    out += "." + f;
  }
  return out;
}

void Integral::add(const Quantity& level, std::int64_t durationNs) {
  if (durationNs <= 0 || level.isZero()) return;
  total_ += Int256(level.nanos()) * durationNs;
}

Integral& Integral::operator+=(const Integral& other) {
  // Boost's checked 256-bit addition is slow next to a copy, and sums of
  // stored buckets mostly start from zero or add one.
  if (other.total_.is_zero()) return *this;
  if (total_.is_zero()) {
    total_ = other.total_;
  } else {
    total_ += other.total_;
  }
  return *this;
}

Integral& Integral::operator-=(const Integral& other) {
  if (!other.total_.is_zero()) total_ -= other.total_;
  return *this;
}

Int256 Integral::nanoUnitSeconds() const { return total_ / kBillion; }

std::string Integral::seconds() const {
  // nano-unit-seconds -> resource-seconds, exact to the nano-unit.
  return exactDecimal(nanoUnitSeconds(), kBillion, 9);
}

std::string Integral::hours(Int128 divisor) const {
  return exactDecimal(nanoUnitSeconds(), Int256(kBillion * 3600) * Int256(divisor), 6);
}

std::string Integral::meanOver(std::int64_t periodNs) const {
  return exactDecimal(total_, Int256(periodNs) * kBillion, 9);
}

void Integral::toRollup(schema::Integral::Builder out) const {
  std::vector<unsigned char> bytes;
  boost::multiprecision::export_bits(total_ < 0 ? Int256(-total_) : total_,
                                     std::back_inserter(bytes), 8);
  while (!bytes.empty() && bytes.front() == 0) bytes.erase(bytes.begin());
  out.setMagnitude(kj::arrayPtr(bytes.data(), bytes.size()));
  out.setNegative(total_ < 0);
}

Integral Integral::fromRollup(schema::Integral::Reader in) {
  const auto bytes = in.getMagnitude();
  if (bytes.size() > kMaxMagnitudeBytes) throw ReplayError("a rollup integral is too large");
  Integral out;
  if (bytes.size() <= 16) {
    // Most integrals fit 128 bits: assembled directly, without Boost's
    // general bit import (a series decodes hundreds of thousands).
    __extension__ using U128 = unsigned __int128;
    U128 magnitude = 0;
    for (const auto byte : bytes) magnitude = (magnitude << 8) | byte;
    out.total_ = Int256(magnitude);
  } else {
    boost::multiprecision::import_bits(out.total_, bytes.begin(), bytes.end(), 8);
  }
  if (in.getNegative()) out.total_ = -out.total_;
  return out;
}

}  // namespace ledger::replay
