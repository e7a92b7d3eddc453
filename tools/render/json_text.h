// JSON written straight to text, byte for byte as nlohmann::json's dump(2)
// prints the same values (two spaces of indent, "key": value, {} and [] for
// empty containers, its string escapes): for a large document such as the
// state report, without building the tree of nodes first.
//
// The caller writes well-formed JSON: key() before each value in an object,
// none in an array, every container closed. Thread-compatible. A string that
// is not valid UTF-8 throws nlohmann's type_error, as dump() does.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ledger::render {

class JsonText {
 public:
  void beginObject() { open('{', true); }
  void endObject() { close('}'); }
  void beginArray() { open('[', false); }
  void endArray() { close(']'); }
  // The next member's key, in an object.
  void key(std::string_view name);

  void string(std::string_view text);
  template <std::integral T>
  requires(!std::same_as<T, bool>) void number(T n) {
    beforeValue();
    out_ += std::to_string(n);
  }
  void boolean(bool b);
  void null();

  // The text written so far (the whole document once the outermost
  // container is closed).
  // Room for `bytes` of text ahead: a large document then grows in place.
  void reserve(std::size_t bytes) { out_.reserve(bytes); }
  const std::string& text() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  struct Level {
    bool object = false;
    std::size_t members = 0;
  };
  void open(char bracket, bool object);
  void close(char bracket);
  // The separator and indent before an array element (a member's come
  // with its key).
  void beforeValue();
  void newLine();
  void quoted(std::string_view text);

  std::string out_;
  std::vector<Level> levels_;
  bool afterKey_ = false;
};

}  // namespace ledger::render
