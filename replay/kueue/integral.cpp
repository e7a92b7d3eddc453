#include "replay/kueue/integral.h"

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
  // The same digits in 128 bits when everything fits with room for the
  // rounding: a series prints hundreds of thousands of values, and Boost's
  // 256-bit division was most of that.
  static const Int256 kSmall = Int256(1) << 96;
  if (digits >= 0 && digits <= 9 && value < kSmall && value > -kSmall && scale < kSmall) {
    __extension__ using I128 = __int128;
    const I128 v = static_cast<I128>(value < 0 ? Int256(-value) : value);
    const I128 sc = static_cast<I128>(scale);
    I128 pow = 1;
    for (int i = 0; i < digits; ++i) pow *= 10;
    // |v| < 2^96 and pow <= 1e9 < 2^30: the product stays below 2^127.
    const I128 scaled = (v * pow + sc / 2) / sc;
    auto text = [](I128 n) {
      std::string t;
      do {
        t.push_back(static_cast<char>('0' + static_cast<int>(n % 10)));
        n /= 10;
      } while (n > 0);
      return std::string(t.rbegin(), t.rend());
    };
    std::string out;
    if (value < 0) out.push_back('-');
    out += text(scaled / pow);
    if (digits > 0) {
      std::string f = text(scaled % pow);
      f.insert(f.begin(), static_cast<std::size_t>(digits) - f.size(), '0');
      out += "." + f;
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
  total_ += other.total_;
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
  if (bytes.size() > 0) {
    boost::multiprecision::import_bits(out.total_, bytes.begin(), bytes.end(), 8);
  }
  if (in.getNegative()) out.total_ = -out.total_;
  return out;
}

}  // namespace ledger::replay
