#include "ingest/json_numbers.h"

namespace ledger::ingest {

namespace {

// nlohmann hands a number it read as a double to number_float with the
// literal's text: an integer literal arrives there only when it does not fit
// int64 or uint64 (nlohmann's lexer tries both first).
class KeepIntegers : public nlohmann::detail::json_sax_dom_parser<nlohmann::json> {
 public:
  using json_sax_dom_parser::json_sax_dom_parser;

  bool number_float(double value, const std::string& literal) {
    if (!isIntegerLiteral(literal)) return json_sax_dom_parser::number_float(value, literal);
    std::string digits = literal;
    return string(digits);
  }
};

}  // namespace

nlohmann::json parseJsonKeepingIntegers(std::string_view text, bool allowExceptions) {
  nlohmann::json out;
  KeepIntegers sax(out, allowExceptions);
  if (!nlohmann::json::sax_parse(text, &sax) || sax.is_errored()) {
    return nlohmann::json(nlohmann::json::value_t::discarded);
  }
  return out;
}

bool isIntegerLiteral(std::string_view text) {
  if (!text.empty() && text.front() == '-') text.remove_prefix(1);
  if (text.empty() || (text.front() == '0' && text.size() > 1)) return false;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace ledger::ingest
