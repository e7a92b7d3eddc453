#include "tools/render/quantity_text.h"

#include <array>

#include "replay/kueue/usage_report.h"
#include "schema/k8s/quantity.h"

namespace ledger::render {

namespace {

constexpr Int128 kNanosPerUnit = 1'000'000'000;

// Rounds n / d half away from zero (d > 0).
Int128 roundedQuotient(Int128 n, Int128 d) { return n < 0 ? -((-n + d / 2) / d) : (n + d / 2) / d; }

std::string decimalText(Int128 v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  if (negative) v = -v;
  std::string digits;
  for (; v > 0; v /= 10)
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
  return negative ? "-" + digits : digits;
}

// Hundredths of the suffix as "71.87", "80", "0.5".
std::string hundredthsText(Int128 hundredths) {
  const bool negative = hundredths < 0;
  if (negative) hundredths = -hundredths;
  std::string text = decimalText(hundredths / 100);
  if (const int cents = static_cast<int>(hundredths % 100); cents != 0) {
    text += '.';
    text += static_cast<char>('0' + cents / 10);
    if (cents % 10 != 0) text += static_cast<char>('0' + cents % 10);
  }
  return negative ? "-" + text : text;
}

std::string bytesText(const Quantity& q) {
  static constexpr std::array<const char*, 7> kSuffix = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  const Int128 magnitude = q.nanos() < 0 ? -q.nanos() : q.nanos();
  std::size_t k = 0;
  while (k + 1 < kSuffix.size() && magnitude >= (Int128(1) << (10 * (k + 1))) * kNanosPerUnit) ++k;
  // A hundredth of the suffix in nanos: 2^(10k) * 1e9 / 100.
  const Int128 hundredth = (Int128(1) << (10 * k)) * (kNanosPerUnit / 100);
  return hundredthsText(roundedQuotient(q.nanos(), hundredth)) + kSuffix[k];
}

}  // namespace

std::string humanMean(std::string_view meanDecimal, const std::string& resource) {
  const std::optional<Quantity> q = Quantity::tryParse(meanDecimal);
  if (!q) return std::string(meanDecimal);
  if (replay::isByteResource(resource)) return bytesText(*q);
  constexpr Int128 kMilli = kNanosPerUnit / 1000;
  return Quantity::fromNanos(roundedQuotient(q->nanos(), kMilli) * kMilli).toString();
}

}  // namespace ledger::render
