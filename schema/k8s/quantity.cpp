// Kubernetes resource.Quantity on a 128-bit count of nano-units.
//
// Parsing follows apimachinery's quantity.go step by step (the hand-written
// scanner parseQuantityString, the suffix table in suffix.go, round-up to nano
// precision, the BinarySI cap at 2^63-1) because its permissive corners are
// part of what the API server accepts. Printing follows CanonicalizeBytes.
#include "schema/k8s/quantity.h"

#include <array>
#include <limits>
#include <stdexcept>
#include <string>

namespace ledger {
namespace {

__extension__ typedef unsigned __int128 UInt128;

constexpr Int128 kNanosPerUnit = 1'000'000'000;
constexpr Int128 kMaxNanos = std::numeric_limits<Int128>::max();

// Upstream's error texts (quantity.go), so messages read the same.
constexpr std::string_view kErrFormatWrong =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
constexpr std::string_view kErrSuffix = "unable to parse quantity's suffix";
constexpr std::string_view kErrRange = "quantity is outside the supported range (+-2^127 nanos)";

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// The pieces parseQuantityString extracts. `num` has its leading zeros
// stripped and is never empty ("0" when there were no integer digits).
struct Scanned {
  bool positive = true;
  std::string_view num;
  std::string_view denom;
  std::string_view suffix;
};

// Mirrors parseQuantityString. Returns an error reason or empty on success.
std::string_view scan(std::string_view s, Scanned& out) {
  size_t pos = 0;
  const size_t end = s.size();
  if (pos < end && (s[0] == '-' || s[0] == '+')) {
    out.positive = s[0] == '+';
    ++pos;
  }
  while (pos < end && s[pos] == '0') ++pos;
  if (pos >= end) {  // only a sign and zeros (or nothing): zero
    out.num = "0";
    return {};
  }
  size_t start = pos;
  while (pos < end && isDigit(s[pos])) ++pos;
  out.num = pos == start ? std::string_view("0") : s.substr(start, pos - start);
  if (pos >= end) return {};
  if (s[pos] == '.') {
    start = ++pos;
    while (pos < end && isDigit(s[pos])) ++pos;
    out.denom = s.substr(start, pos - start);
    if (pos >= end) return {};
  }
  // Suffix: letters from the allowed set, an optional sign, then digits to
  // the end. Anything else is a format error; the letters are interpreted
  // later (so "Mm" scans fine but is an unknown suffix).
  const size_t suffixStart = pos;
  while (pos < end && std::string_view("eEinumkKMGTP").find(s[pos]) != std::string_view::npos) {
    ++pos;
  }
  if (pos < end && (s[pos] == '-' || s[pos] == '+')) ++pos;
  while (pos < end && isDigit(s[pos])) ++pos;
  if (pos < end) return kErrFormatWrong;
  out.suffix = s.substr(suffixStart);
  return {};
}

struct Suffix {
  int base = 10;
  std::int64_t exponent = 0;
  Quantity::Format format = Quantity::Format::kDecimalSI;
};

// Mirrors suffixer.interpret: the SI tables first, then "e<int>"/"E<int>".
std::optional<Suffix> interpretSuffix(std::string_view s) {
  using F = Quantity::Format;
  struct Entry {
    std::string_view text;
    int base;
    int exponent;
    F format;
  };
  static constexpr std::array<Entry, 16> kTable = {{
      {"", 10, 0, F::kDecimalSI},
      {"n", 10, -9, F::kDecimalSI},
      {"u", 10, -6, F::kDecimalSI},
      {"m", 10, -3, F::kDecimalSI},
      {"k", 10, 3, F::kDecimalSI},
      {"M", 10, 6, F::kDecimalSI},
      {"G", 10, 9, F::kDecimalSI},
      {"T", 10, 12, F::kDecimalSI},
      {"P", 10, 15, F::kDecimalSI},
      {"E", 10, 18, F::kDecimalSI},
      {"Ki", 2, 10, F::kBinarySI},
      {"Mi", 2, 20, F::kBinarySI},
      {"Gi", 2, 30, F::kBinarySI},
      {"Ti", 2, 40, F::kBinarySI},
      {"Pi", 2, 50, F::kBinarySI},
      {"Ei", 2, 60, F::kBinarySI},
  }};
  for (const Entry& e : kTable) {
    if (e.text == s) return Suffix{e.base, e.exponent, e.format};
  }
  if (s.size() < 2 || (s[0] != 'e' && s[0] != 'E')) return std::nullopt;
  // strconv.ParseInt(s[1:], 10, 64): optional sign, digits, no overflow.
  std::string_view digits = s.substr(1);
  bool negative = false;
  if (digits[0] == '+' || digits[0] == '-') {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  if (digits.empty()) return std::nullopt;
  UInt128 value = 0;
  for (char c : digits) {
    if (!isDigit(c)) return std::nullopt;
    value = value * 10 + static_cast<unsigned>(c - '0');
    if (value > static_cast<UInt128>(std::numeric_limits<std::int64_t>::max()) + 1) {
      return std::nullopt;
    }
  }
  if (!negative && value > static_cast<UInt128>(std::numeric_limits<std::int64_t>::max())) {
    return std::nullopt;
  }
  std::int64_t parsed = negative ? static_cast<std::int64_t>(-static_cast<Int128>(value))
                                 : static_cast<std::int64_t>(value);
  // Upstream stores the exponent as int32(parsed), wrapping huge exponents.
  return Suffix{10, static_cast<std::int32_t>(static_cast<std::uint32_t>(parsed)),
                Quantity::Format::kDecimalExponent};
}

// digits * 10^exp10 rounded up to an integer (the fraction is dropped and
// counted as one more nano, as inf.RoundUp does on the magnitude). `digits`
// is a plain decimal string without leading zeros. nullopt when the result
// does not fit in a signed 128-bit magnitude.
std::optional<UInt128> scaleDigits(std::string_view digits, std::int64_t exp10) {
  while (!digits.empty() && digits.back() == '0') {
    digits.remove_suffix(1);
    ++exp10;
  }
  if (digits.empty()) return UInt128{0};
  const auto limit = static_cast<UInt128>(kMaxNanos);
  bool roundUp = false;
  if (exp10 < 0) {
    // The last kept digit is non-zero, so dropping any digits leaves a
    // non-zero fraction.
    const auto drop = static_cast<std::uint64_t>(-exp10);
    if (drop >= digits.size()) return UInt128{1};
    digits.remove_suffix(drop);
    exp10 = 0;
    roundUp = true;
  }
  if (static_cast<std::uint64_t>(exp10) + digits.size() > 39) return std::nullopt;
  UInt128 value = 0;
  for (char c : digits) {
    // Checked before multiplying: 39 digits can exceed 2^128 and wrap.
    if (value > limit / 10) return std::nullopt;
    value = value * 10 + static_cast<unsigned>(c - '0');
    if (value > limit) return std::nullopt;
  }
  for (std::int64_t i = 0; i < exp10; ++i) {
    if (value > limit / 10) return std::nullopt;
    value *= 10;
  }
  if (roundUp && ++value > limit) return std::nullopt;
  return value;
}

// The common case, exactly: at most 19 digits (they fit in 64 bits) and no
// fraction of a nano left (exp10 >= 0), so the value is digits * 2^shift *
// 10^exp10 in integers - what doubleDigits and scaleDigits compute on a
// decimal string, without the string: a report parses every published
// device's capacity, and "5Gi" took thirty passes over its digits.
std::optional<UInt128> scaleSmall(std::string_view digits, std::int64_t shift, std::int64_t exp10) {
  const auto limit = static_cast<UInt128>(kMaxNanos);
  std::uint64_t whole = 0;
  for (char c : digits) whole = whole * 10 + static_cast<unsigned>(c - '0');
  auto value = static_cast<UInt128>(whole);
  if (value == 0) return value;
  for (std::int64_t i = 0; i < shift; ++i) {
    if (value > limit / 2) return std::nullopt;
    value <<= 1;
  }
  for (std::int64_t i = 0; i < exp10; ++i) {
    if (value > limit / 10) return std::nullopt;
    value *= 10;
  }
  return value;
}

// Multiplies a decimal digit string by 2^times, in place.
void doubleDigits(std::string& digits, std::int64_t times) {
  for (std::int64_t t = 0; t < times; ++t) {
    int carry = 0;
    for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
      const int d = (*it - '0') * 2 + carry;
      *it = static_cast<char>('0' + d % 10);
      carry = d / 10;
    }
    if (carry != 0) digits.insert(digits.begin(), static_cast<char>('0' + carry));
  }
}

std::string_view parseInto(std::string_view text, Quantity::Format& format, Int128& nanos) {
  if (text.empty()) return kErrFormatWrong;
  Scanned scanned;
  if (std::string_view err = scan(text, scanned); !err.empty()) return err;
  const std::optional<Suffix> suffix = interpretSuffix(scanned.suffix);
  if (!suffix) return kErrSuffix;

  // All digits as one integer; the value is digits * 10^-len(denom) * suffix.
  std::string digits;
  digits.reserve(scanned.num.size() + scanned.denom.size());
  digits.append(scanned.num).append(scanned.denom);
  const size_t firstNonZero = digits.find_first_not_of('0');
  digits.erase(0, firstNonZero == std::string::npos ? digits.size() : firstNonZero);

  std::int64_t exp10 = 9 - static_cast<std::int64_t>(scanned.denom.size());
  std::int64_t shift = 0;
  if (suffix->base == 10) {
    exp10 += suffix->exponent;
  } else {
    shift = suffix->exponent;
  }
  std::optional<UInt128> magnitude;
  if (digits.size() <= 19 && exp10 >= 0) {
    magnitude = scaleSmall(digits, shift, exp10);
  } else {
    doubleDigits(digits, shift);
    magnitude = scaleDigits(digits, exp10);
  }
  if (!magnitude) return kErrRange;

  format = suffix->format;
  if (format == Quantity::Format::kBinarySI) {
    // Upstream caps BinarySI at 2^63-1 units, and shows a non-zero value
    // below one unit as DecimalSI ("avoids rounding and hopefully confusion").
    const UInt128 cap =
        static_cast<UInt128>(std::numeric_limits<std::int64_t>::max()) * kNanosPerUnit;
    if (*magnitude > cap) magnitude = cap;
    if (*magnitude != 0 && *magnitude < static_cast<UInt128>(kNanosPerUnit)) {
      format = Quantity::Format::kDecimalSI;
    }
  }
  nanos = static_cast<Int128>(*magnitude);
  if (!scanned.positive) nanos = -nanos;
  return {};
}

void appendUnsigned(std::string& out, UInt128 value) {
  char buf[40];
  size_t n = 0;
  do {
    buf[n++] = static_cast<char>('0' + static_cast<int>(value % 10));
    value /= 10;
  } while (value != 0);
  while (n > 0) out.push_back(buf[--n]);
}

std::string_view decimalSuffix(int exponent) {
  switch (exponent) {
    case -9:
      return "n";
    case -6:
      return "u";
    case -3:
      return "m";
    case 3:
      return "k";
    case 6:
      return "M";
    case 9:
      return "G";
    case 12:
      return "T";
    case 15:
      return "P";
    case 18:
      return "E";
    default:
      return "";
  }
}

[[noreturn]] void throwOverflow() { throw std::overflow_error("quantity arithmetic overflow"); }

}  // namespace

std::optional<Quantity> Quantity::tryParse(std::string_view text) {
  Format format = Format::kDecimalSI;
  Int128 nanos = 0;
  if (!parseInto(text, format, nanos).empty()) return std::nullopt;
  return Quantity(nanos, format);
}

Quantity Quantity::parse(std::string_view text) {
  Format format = Format::kDecimalSI;
  Int128 nanos = 0;
  if (std::string_view err = parseInto(text, format, nanos); !err.empty()) {
    throw std::invalid_argument("cannot parse quantity \"" + std::string(text) +
                                "\": " + std::string(err));
  }
  return Quantity(nanos, format);
}

Quantity Quantity::fromInt(std::int64_t whole, Format format) {
  return Quantity(static_cast<Int128>(whole) * kNanosPerUnit, format);
}

Quantity Quantity::fromNanos(Int128 nanos, Format format) { return Quantity(nanos, format); }

// CanonicalizeBytes: no fractional digits, the largest exponent (suffix) that
// loses nothing; BinarySI falls back to DecimalSI below 1024 or when the value
// is not a whole number of units.
std::string Quantity::toString() const {
  if (nanos_ == 0) return "0";
  const bool negative = nanos_ < 0;
  const UInt128 magnitude = negative ? -static_cast<UInt128>(nanos_) : static_cast<UInt128>(nanos_);
  const auto perUnit = static_cast<UInt128>(kNanosPerUnit);
  Format format = format_;
  if (format == Format::kBinarySI && (magnitude < 1024 * perUnit || magnitude % perUnit != 0)) {
    format = Format::kDecimalSI;
  }

  std::string out;
  if (negative) out.push_back('-');
  if (format == Format::kBinarySI) {
    static constexpr std::array<std::string_view, 7> kBinary = {"",   "Ki", "Mi", "Gi",
                                                                "Ti", "Pi", "Ei"};
    UInt128 units = magnitude / perUnit;
    size_t power = 0;
    // Upstream would print a bare mantissa past Ei (a value-changing bug);
    // stopping at Ei keeps the text parseable to the same value.
    while (power + 1 < kBinary.size() && units >= 1024 && units % 1024 == 0) {
      units /= 1024;
      ++power;
    }
    appendUnsigned(out, units);
    out.append(kBinary[power]);
    return out;
  }

  UInt128 mantissa = magnitude;
  int exponent = -9;
  while (mantissa >= 10 && mantissa % 10 == 0) {
    mantissa /= 10;
    ++exponent;
  }
  // Round the exponent down to a multiple of three (Go's % truncates like C++).
  while (exponent % 3 != 0) {
    mantissa *= 10;
    --exponent;
  }
  if (format == Format::kDecimalSI) {
    // Same reasoning as for Ei above: never print a value without its suffix.
    for (; exponent > 18; --exponent) mantissa *= 10;
    appendUnsigned(out, mantissa);
    out.append(decimalSuffix(exponent));
    return out;
  }
  appendUnsigned(out, mantissa);
  if (exponent != 0) out.append("e").append(std::to_string(exponent));
  return out;
}

bool Quantity::isWhole() const { return nanos_ % kNanosPerUnit == 0; }

std::optional<std::int64_t> Quantity::toInt64() const {
  if (!isWhole()) return std::nullopt;
  const Int128 units = nanos_ / kNanosPerUnit;
  if (units < std::numeric_limits<std::int64_t>::min() ||
      units > std::numeric_limits<std::int64_t>::max()) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(units);
}

// Value(): ScaledValue(0), which rounds away from zero ("-9.01" -> -10).
std::int64_t Quantity::ceilValue() const {
  Int128 units = nanos_ / kNanosPerUnit;
  if (nanos_ % kNanosPerUnit != 0) units += nanos_ > 0 ? 1 : -1;
  if (units < std::numeric_limits<std::int64_t>::min() ||
      units > std::numeric_limits<std::int64_t>::max()) {
    throw std::overflow_error("quantity " + toString() + " does not fit in int64");
  }
  return static_cast<std::int64_t>(units);
}

// Quantity.Add/Sub: a zero receiver adopts the other operand's format.
Quantity& Quantity::operator+=(const Quantity& other) {
  if (nanos_ == 0) format_ = other.format_;
  if (__builtin_add_overflow(nanos_, other.nanos_, &nanos_)) throwOverflow();
  return *this;
}

Quantity& Quantity::operator-=(const Quantity& other) {
  if (nanos_ == 0) format_ = other.format_;
  if (__builtin_sub_overflow(nanos_, other.nanos_, &nanos_)) throwOverflow();
  return *this;
}

Quantity Quantity::operator+(const Quantity& other) const {
  Quantity result = *this;
  result += other;
  return result;
}

Quantity Quantity::operator-(const Quantity& other) const {
  Quantity result = *this;
  result -= other;
  return result;
}

Quantity Quantity::operator*(std::int64_t factor) const {
  Int128 product = 0;
  if (__builtin_mul_overflow(nanos_, static_cast<Int128>(factor), &product)) throwOverflow();
  return Quantity(product, format_);
}

}  // namespace ledger
