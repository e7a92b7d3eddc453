// Splits an input stream into JSON values or YAML documents, streaming.
//
// Accepts what `ledger-ingest --from` promises (docs/reference.md): JSON values one
// per line or pretty-printed and concatenated (kubectl get -w -o json), or
// YAML documents separated by `---`. The first non-blank byte decides: '{' or
// '[' means JSON, anything else YAML. JSON values are framed by bracket depth
// (outside strings) and then parsed by simdjson into nlohmann values (with
// nlohmann's own parser where the two could differ); YAML documents are
// parsed by yaml-cpp and converted to JSON. Either way an integer beyond the
// int64 and uint64 ranges is kept as a string of its digits, never rounded
// through a double (json_numbers.h). Memory is bounded by the largest
// single value, never by the file: Options::maxValueBytes bounds a JSON value,
// a YAML document (and any line of it), and what a YAML document's aliases
// expand to (yaml_json.h); values nested deeper than kMaxNestingDepth
// (input_limits.h) are rejected before they are parsed.
//
// Recovery: a value that does not parse is returned with `error` set and its
// position; reading continues with the next value. A JSON value cut short (a
// newline inside a string, or a new '{' at column 0 while a value is open)
// ends there, so one truncated line does not swallow the lines after it.
//
// Ownership: borrows the istream, which must outlive the reader.
// Thread safety: none (one reader per stream). Errors: never throws for bad
// input; std::istream failures surface as end of input.
#pragma once

#include <cstdint>
#include <istream>
#include <nlohmann/json.hpp>
#include <string>

#include "ingest/projector.h"

namespace ledger::ingest {

struct DecodedValue {
  nlohmann::json value;         // valid when error is empty
  std::string error;            // why this value was rejected
  std::uint64_t line = 0;       // 1-based line where the value starts
  std::uint64_t offset = 0;     // byte offset where the value starts
  std::uint64_t endOffset = 0;  // byte offset just past the value
  // With Options::storedJson, when the value is a watch event or a bare
  // object read by the fast path: its watched object as the ledger stores it
  // (simd_json.h), else empty.
  std::string storedObjectJson;
  // With Options::projection, when the value is an ADDED, MODIFIED or
  // DELETED watch event or a bare object read by the fast path: the
  // projection (projector.h) of its object, and `value` holds only what
  // normalizeValue() and the Ingester read of that object (apiVersion, kind,
  // and metadata's name, namespace, uid and resourceVersion). Else empty, and
  // `value` is whole.
  std::string projection;
};

class ValueReader {
 public:
  struct Options {
    std::uint64_t maxValueBytes = 64ULL << 20;
    // Leave out metadata.managedFields of the watched object (a watch
    // event's "object", each List item, or a bare object) while building the
    // value: what Ingester::add drops anyway, so the ledger is the same
    // bytes, and building the value is about twice as fast. Nested metadata
    // (a pod template's) is kept. Values that go to nlohmann's parser (see
    // value_reader.cpp) keep it, and the Ingester drops it there.
    bool dropManagedFields = false;
    // Fill DecodedValue::storedObjectJson where the fast path can.
    bool storedJson = false;
    // Fill DecodedValue::projection where the fast path can, and leave out
    // of the value what only the projection would read: building and freeing
    // an nlohmann tree of the whole object was half of the reading thread.
    // Requires dropManagedFields and storedJson (the constructor sets them):
    // the stored JSON cannot come from the partial value.
    bool projection = false;
    // What those projections depend on besides the object (projector.h).
    ProjectionOptions projectionOptions;
    // Take a line that holds exactly one value without framing it byte by
    // byte (value_reader.cpp, nextWholeLine); the same results either way,
    // so this is off only to test that.
    bool wholeLines = true;
  };

  explicit ValueReader(std::istream& in, std::uint64_t maxValueBytes = 64ULL << 20);
  ValueReader(std::istream& in, const Options& options);

  // Fills `out` with the next value (or the next rejected one); false at end.
  bool next(DecodedValue* out);
  std::uint64_t bytesConsumed() const { return consumed_; }

 private:
  enum class Mode { kUnknown, kJson, kYaml };

  bool fill();  // reads more input into buffer_; false at end of input
  bool nextJson(DecodedValue* out);
  bool nextWholeLine(DecodedValue* out);  // the JSON Lines fast path of nextJson
  bool nextYaml(DecodedValue* out);
  void skipRestOfLine();    // past the next newline, keeping nothing
  void skipYamlDocument();  // to the next `---` or `...` line, keeping nothing
  void compact();

  std::istream& in_;
  std::uint64_t maxValueBytes_;
  Options options_;
  Mode mode_ = Mode::kUnknown;
  std::string buffer_;
  std::size_t pos_ = 0;           // scan position in buffer_
  std::uint64_t bufferBase_ = 0;  // stream offset of buffer_[0]
  std::uint64_t line_ = 1;        // line at pos_
  std::uint64_t consumed_ = 0;
  bool eof_ = false;
};

}  // namespace ledger::ingest
