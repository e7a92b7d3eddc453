#include "tools/render/json_text.h"

#include <nlohmann/json.hpp>

namespace ledger::render {

void JsonText::newLine() {
  out_ += '\n';
  out_.append(2 * levels_.size(), ' ');
}

void JsonText::beforeValue() {
  if (afterKey_) {
    afterKey_ = false;
    return;
  }
  if (levels_.empty()) return;
  Level& level = levels_.back();
  if (level.members++ > 0) out_ += ',';
  newLine();
}

void JsonText::key(std::string_view name) {
  Level& level = levels_.back();
  if (level.members++ > 0) out_ += ',';
  newLine();
  quoted(name);
  out_ += ": ";
  afterKey_ = true;
}

void JsonText::open(char bracket, bool object) {
  beforeValue();
  out_ += bracket;
  levels_.push_back(Level{object, 0});
}

void JsonText::close(char bracket) {
  const bool empty = levels_.back().members == 0;
  levels_.pop_back();
  if (!empty) newLine();
  out_ += bracket;
}

void JsonText::quoted(std::string_view text) {
  // Printable ASCII other than the quote and backslash is written as it is;
  // anything else as nlohmann escapes it (and rejects invalid UTF-8).
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x80 || c == '"' || c == '\\') {
      out_ += nlohmann::json(std::string(text)).dump();
      return;
    }
  }
  out_ += '"';
  out_ += text;
  out_ += '"';
}

void JsonText::string(std::string_view text) {
  beforeValue();
  quoted(text);
}

void JsonText::boolean(bool b) {
  beforeValue();
  out_ += b ? "true" : "false";
}

void JsonText::null() {
  beforeValue();
  out_ += "null";
}

}  // namespace ledger::render
