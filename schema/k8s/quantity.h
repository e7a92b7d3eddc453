// Exact Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource).
//
// A Quantity is a signed decimal held exactly as a count of nano-units
// (10^-9), which is the finest precision Kubernetes keeps: a value given with
// more fractional digits is rounded up to the next nano-unit, as
// resource.Quantity does. No floating point is involved anywhere, so sums are
// exact and printing is deterministic.
//
// The format (DecimalSI "1500m"/"5k", BinarySI "200Mi", DecimalExponent "1e3")
// is remembered from parsing and used by toString(), which prints the
// canonical form Kubernetes would (Quantity.String()): e.g. "0.5" -> "500m",
// "1e3" -> "1e3", "40320Mi" -> "40320Mi", "5100273664" -> "5100273664".
// Arithmetic keeps the left operand's format, as Quantity.Add does (which
// also means a zero left operand takes the right operand's format).
//
// Parsing accepts exactly what resource.ParseQuantity accepts, including its
// permissive corners ("Mi", "+", "." all parse as zero: apimachinery#165).
// Known differences, both outside what the API server ever stores: a value
// beyond the representable range is rejected instead of kept as an inf.Dec;
// and toString() always prints the canonical form, whereas Quantity.String()
// echoes a freshly parsed text verbatim when it passes a "looks canonical"
// shortcut (so upstream prints "+1" or "1.001" back unchanged).
//
// Value type; thread-compatible. Errors: parse() throws std::invalid_argument
// naming the text and upstream's reason; tryParse() returns std::nullopt
// instead. Arithmetic that would leave the representable range (+-2^127 nanos,
// about +-1.7e29 whole units) throws std::overflow_error.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ledger {

// GCC/Clang's 128-bit integer; the __extension__ keeps -Wpedantic quiet.
__extension__ typedef __int128 Int128;

class Quantity {
 public:
  enum class Format { kDecimalSI, kBinarySI, kDecimalExponent };

  Quantity() = default;  // zero, DecimalSI

  static std::optional<Quantity> tryParse(std::string_view text);
  static Quantity parse(std::string_view text);
  static Quantity fromInt(std::int64_t whole, Format format = Format::kDecimalSI);
  static Quantity fromNanos(Int128 nanos, Format format = Format::kDecimalSI);

  // Kubernetes' canonical string for this value in its format.
  std::string toString() const;

  Int128 nanos() const { return nanos_; }
  Format format() const { return format_; }
  bool isZero() const { return nanos_ == 0; }
  bool isNegative() const { return nanos_ < 0; }
  // True when the value is a whole number of units (no fractional part).
  bool isWhole() const;
  // The whole value when isWhole() and it fits, else nullopt.
  std::optional<std::int64_t> toInt64() const;
  // Rounded up to a whole unit (Quantity.Value() semantics).
  std::int64_t ceilValue() const;

  Quantity& operator+=(const Quantity& other);
  Quantity& operator-=(const Quantity& other);
  Quantity operator+(const Quantity& other) const;
  Quantity operator-(const Quantity& other) const;
  // Multiplication by a whole count (pod set count, device count).
  Quantity operator*(std::int64_t factor) const;

  friend bool operator==(const Quantity& a, const Quantity& b) { return a.nanos_ == b.nanos_; }
  friend std::strong_ordering operator<=>(const Quantity& a, const Quantity& b) {
    return a.nanos_ <=> b.nanos_;
  }

 private:
  Quantity(Int128 nanos, Format format) : nanos_(nanos), format_(format) {}

  Int128 nanos_ = 0;
  Format format_ = Format::kDecimalSI;
};

}  // namespace ledger
