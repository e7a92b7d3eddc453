// ValueReader's fast path (simdjson, ingest/value_reader.cpp) must give
// exactly what nlohmann::json::parse gives - the same value, the same types
// (unsigned vs signed vs float), the same printed bytes - and, for input
// nlohmann rejects, an error with nlohmann's message (a value nlohmann
// cannot represent, such as 1e400, is rejected too, never thrown). Checked
// on edge cases and seeded random documents mixing number and string forms.
#include <functional>
#include <random>

#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::testing;

namespace {

const char* const kNumbers[] = {"0",
                                "-0",
                                "1",
                                "-1",
                                "0.0",
                                "-0.0",
                                "1.0",
                                "1e2",
                                "1E2",
                                "-1e-2",
                                "2.5e+3",
                                "9223372036854775807",
                                "9223372036854775808",
                                "-9223372036854775808",
                                "-9223372036854775809",
                                "18446744073709551615",
                                "18446744073709551616",
                                "123456789012345678901234567890",
                                "1e308",
                                "4.9e-324",
                                "1e-400",
                                "1e400",
                                "0.1",
                                "3.141592653589793238462643383279",
                                "-0e0",
                                "01",
                                "1.",
                                ".5",
                                "+1"};
const char* const kStrings[] = {
    R"("a")",          R"("\u0000")",       R"("\u001f")",  R"("\u007f")",  "\"\xC3\xA9\"",
    R"("\u00e9")",     R"("\ud83d\ude00")", R"("\ud800")",  R"("\udc00")",  R"("\/")",
    R"("\b\f\n\r\t")", R"("\"")",           R"("\\")",      R"("\\u0041")", R"("")",
    "\"\xFF\"",        R"("\x")",           "\"tab\there\""};

std::string randomValue(std::mt19937& rng, int depth) {
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const int r = pick(100);
  if (depth < 3 && r < 20) {
    std::string out = "{";
    for (int i = pick(4); i > 0; --i) {
      out += (pick(3) == 0 ? std::string(R"("k")") : kStrings[pick(std::size(kStrings))]);
      out += ":" + randomValue(rng, depth + 1) + (i > 1 ? "," : "");
    }
    return out + "}";
  }
  if (depth < 3 && r < 35) {
    std::string out = "[";
    for (int i = pick(4); i > 0; --i) out += randomValue(rng, depth + 1) + (i > 1 ? "," : "");
    return out + "]";
  }
  if (r < 70) return kNumbers[pick(std::size(kNumbers))];
  if (r < 90) return kStrings[pick(std::size(kStrings))];
  const char* const literals[] = {"true", "false", "null", "nul", "tru"};
  return literals[pick(5)];
}

// The integer literals of kNumbers beyond int64 and uint64, quoted: the
// reader keeps such a literal as a string of its digits where nlohmann makes
// a double of it (ingest/json_numbers.h).
std::string quoteLongIntegers(std::string line) {
  for (const std::string literal :
       {"18446744073709551616", "123456789012345678901234567890", "-9223372036854775809"}) {
    for (auto at = line.find(literal); at != std::string::npos;
         at = line.find(literal, at + literal.size() + 2)) {
      line.replace(at, literal.size(), "\"" + literal + "\"");
    }
  }
  return line;
}

// Reads `lines` (one JSON value each) with ValueReader and compares each
// value with nlohmann's parse of the same line, long integers quoted.
void checkSameAsNlohmann(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  std::istringstream in(text);
  ingest::ValueReader reader(in);
  ingest::DecodedValue v;
  std::size_t i = 0;
  while (reader.next(&v)) {
    REQUIRE(i < lines.size());
    const std::string& line = lines[i++];
    INFO(line);
    Json expected;
    std::string error;
    try {
      expected = Json::parse(line);  // errors and their positions as in the text read
      expected = Json::parse(quoteLongIntegers(line));
    } catch (const Json::exception& e) {  // parse_error, and out_of_range for 1e400
      error = e.what();
      error = error.substr(error.find("] ") + 2);
    }
    if (error.empty()) {
      REQUIRE(v.error.empty());
      CHECK(v.value == expected);
      CHECK(v.value.dump() == expected.dump());
      CHECK(v.value.type() == expected.type());
    } else {
      CHECK(v.error.find(error) != std::string::npos);
    }
  }
  CHECK(i == lines.size());
}

}  // namespace

TEST_CASE("fast JSON parsing: edge cases give nlohmann's values and errors", "[value_reader]") {
  checkSameAsNlohmann({
      R"({"a":-0,"b":-0.0,"c":0,"d":1.0,"e":18446744073709551615,"f":-9223372036854775808})",
      R"({"big":18446744073709551616,"neg":-9223372036854775809,"huge":1e400})",
      R"({"dup":1,"dup":"last","x":{"dup":[1],"dup":{}}})",
      R"({"s":"\u003c\u003e\u0026 \ud83d\ude00 \u00e9 \/ \t"})",
      R"({"lone":"\ud800"})",
      R"({"lone":"\udc00"})",
      R"({"a":[1,2,{"b":null}],"c":true,"d":false,"e":""})",
      R"([{"kind":"Pod"},[],{}])",
      R"({"a":01})",
      R"({"a":1,})",
      R"({"a":nul})",
  });
}

TEST_CASE("fast JSON parsing: random documents give nlohmann's values", "[value_reader]") {
  std::mt19937 rng(20261120);
  std::vector<std::string> lines;
  for (int i = 0; i < repetitions(5000); ++i) {
    std::string doc = "{";
    const int fields = 1 + static_cast<int>(rng() % 5);
    for (int f = 0; f < fields; ++f) {
      doc += "\"f" + std::to_string(f) + "\":" + randomValue(rng, 0) + (f + 1 < fields ? "," : "");
    }
    lines.push_back(doc + "}");
  }
  checkSameAsNlohmann(lines);
}

// With dropManagedFields the reader leaves out what the Ingester drops - the
// watched object's metadata.managedFields - and nothing else: every object
// normalizeValue() hands on equals nlohmann's with that one member erased,
// byte for byte, and no other managedFields (a pod template's, a field
// that merely looks like an event's "object") goes missing.
TEST_CASE("dropManagedFields leaves out exactly what the Ingester drops", "[value_reader]") {
  const std::string mf = R"("managedFields":[{"manager":"kubectl","operation":"Update"}])";
  const std::vector<std::string> lines = {
      // A watch event, with a nested pod template that keeps its own.
      R"({"type":"ADDED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",)" + mf +
          R"(,"uid":"u"},"spec":{"template":{"metadata":{)" + mf + R"(}}}}})",
      // A List: each item is a watched object; the list's own metadata is not stored.
      R"({"apiVersion":"v1","kind":"PodList","metadata":{)" + mf +
          R"(},"items":[{"metadata":{"name":"a",)" + mf + R"(}},7,{"metadata":{"name":"b"}}]})",
      // A bare object whose "object" field is data, not a watch event's object.
      R"({"apiVersion":"v1","kind":"Thing","metadata":{"name":"t",)" + mf +
          R"(},"object":{"metadata":{)" + mf + R"(}}})",
      // "type" that is not a string: normalizeValue reads a bare object, so do we.
      R"({"type":1,"object":{"metadata":{)" + mf +
          R"(}},"apiVersion":"v1","kind":"K","metadata":{"name":"n",)" + mf + "}}",
      // Duplicate keys: the last wins, as in nlohmann, for the form and the value.
      R"({"type":7,"type":"MODIFIED","object":{"kind":"X"},"object":{"apiVersion":"v1","kind":"K","metadata":{"name":"d",)" +
          mf + R"(,"managedFields":null}}})",
      R"({"kind":"PodList","kind":"Pod","apiVersion":"v1","items":[{"metadata":{)" + mf +
          R"(}}],"metadata":{"name":"notalist",)" + mf + "}}",
      // "items" that is not an array: not a List.
      R"({"apiVersion":"v1","kind":"PodList","items":{"metadata":{)" + mf +
          R"(}},"metadata":{"name":"l",)" + mf + "}}",
      // Values the fast path hands to nlohmann (-0) keep managedFields; the Ingester drops them.
      R"({"type":"ADDED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"z",)" + mf +
          R"(},"n":-0}})",
  };
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  std::istringstream in(text);
  ingest::ValueReader::Options options;
  options.dropManagedFields = true;
  ingest::ValueReader reader(in, options);
  ingest::DecodedValue v;
  std::size_t i = 0;
  std::size_t stored = 0;
  while (reader.next(&v)) {
    REQUIRE(i < lines.size());
    const std::string& line = lines[i++];
    INFO(line);
    REQUIRE(v.error.empty());
    auto fast = ingest::normalizeValue(std::move(v.value));
    auto reference = ingest::normalizeValue(Json::parse(line));
    REQUIRE(fast.errors == reference.errors);
    REQUIRE(fast.events.size() == reference.events.size());
    for (std::size_t e = 0; e < fast.events.size(); ++e) {
      Json& expected = reference.events[e].object;
      // What Ingester::add does before storing the object.
      if (auto meta = expected.find("metadata"); meta != expected.end() && meta->is_object())
        meta->erase("managedFields");
      Json& got = fast.events[e].object;
      if (line.find("-0}") == std::string::npos) {
        CHECK_FALSE(got["metadata"].contains("managedFields"));
      } else if (auto meta = got.find("metadata"); meta != got.end()) {
        meta->erase("managedFields");
      }
      CHECK(got.dump() == expected.dump());
      ++stored;
    }
  }
  CHECK(i == lines.size());
  CHECK(stored == 9);
}

namespace {

// What the Ingester stores for a value nlohmann parses: the watched object
// (an event's "object", or the value itself) with metadata.managedFields
// erased, dumped; "" for Lists and non-objects, whose items are completed by
// normalizeValue first.
std::string referenceStored(const std::string& line) {
  Json value = Json::parse(line);
  if (!value.is_object()) return {};
  const auto type = value.find("type");
  Json object;
  if (type != value.end() && type->is_string() && value.contains("object")) {
    object = value["object"];
  } else {
    const auto kind = value.find("kind");
    const auto items = value.find("items");
    if (kind != value.end() && kind->is_string() && items != value.end() && items->is_array()) {
      const std::string& k = kind->get_ref<const std::string&>();
      if (k.size() >= 4 && k.compare(k.size() - 4, 4, "List") == 0) return {};
    }
    object = value;
  }
  if (auto meta = object.find("metadata"); meta != object.end() && meta->is_object())
    meta->erase("managedFields");
  return object.dump();
}

// Reads `lines` with storedJson and compares each stored text with the
// reference; returns how many values the fast path wrote. `written`, when
// given, says per line whether the fast path must write it (values nlohmann
// parses itself, such as -0, get no text, and the Ingester dumps them).
std::size_t checkStoredJson(const std::vector<std::string>& lines,
                            const std::vector<bool>* written = nullptr) {
  std::string text;
  for (const auto& l : lines) text += l + "\n";
  std::istringstream in(text);
  ingest::ValueReader::Options options;
  options.dropManagedFields = true;
  options.storedJson = true;
  ingest::ValueReader reader(in, options);
  ingest::DecodedValue v;
  std::size_t i = 0, count = 0;
  while (reader.next(&v)) {
    REQUIRE(i < lines.size());
    const std::string& line = lines[i++];
    INFO(line);
    if (written != nullptr) CHECK(!v.storedObjectJson.empty() == (*written)[i - 1]);
    if (!v.error.empty()) {
      CHECK(v.storedObjectJson.empty());
      continue;
    }
    if (v.storedObjectJson.empty()) continue;
    ++count;
    CHECK(v.storedObjectJson == referenceStored(line));
  }
  CHECK(i == lines.size());
  return count;
}

}  // namespace

// The JSON the ledger stores, written straight from simdjson (simd_json.h),
// must be nlohmann's dump() of the same object, byte for byte: sorted keys,
// the last duplicate, nlohmann's escapes and number forms.
TEST_CASE("stored JSON from the fast path is nlohmann's dump", "[value_reader]") {
  const std::string mf = R"("managedFields":[{"manager":"m"}])";
  const std::vector<std::string> lines = {
      R"({"z":1,"a":{"y":[3,{"b":2,"a":1}],"x":null},"m":true,"n":false,"e":"","o":{},"l":[]})",
      R"({"s":"\u0000\u0001\u001f\u007f\b\f\n\r\t\"\\\/ \u00e9 \u20ac é 😀 \u003c"})",
      R"({"dup":1,"dup":"last","x":{"dup":[1],"dup":{}},"a":0,"a":{"metadata":{}}})",
      R"({"i":[0,1,-1,9223372036854775807,9223372036854775808,-9223372036854775808,18446744073709551615]})",
      R"({"d":[0.0,1.0,1e2,1E2,-1e-2,2.5e+3,1e308,4.9e-324,0.1,3.141592653589793,1e-400]})",
      R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"p",)" + mf +
          R"(,"b":1},"spec":{"template":{"metadata":{)" + mf + R"(}}}},"time":"t"})",
      R"({"type":"MODIFIED","object":{"kind":"X"},"object":{"metadata":{"z":1,)" + mf +
          R"(,"managedFields":null,"a":2}}})",
      R"({"type":"BOOKMARK","object":"not an object"})",
      R"({"type":1,"object":{"metadata":{)" + mf + R"(}},"metadata":{"name":"n",)" + mf + "}}",
      R"({"kind":"PodList","apiVersion":"v1","items":[{"metadata":{)" + mf + R"(}}]})",
      R"({"kind":"PodList","items":{"metadata":{)" + mf + R"(}},"metadata":{)" + mf + "}}",
      R"({"metadata":"not an object","managedFields":1})",
      R"({"metadata":{"managedFields":1,"annotations":{"managedFields":"kept"}}})",
      R"({"n":-0,"metadata":{)" + mf + "}}",
      R"({"s":"\ud83d\ude00"})",
      R"([1,2])",
      R"({"big":123456789012345678901234567890})",
  };
  // Lists, arrays, escaped surrogates and integers past 64 bits get no text.
  const std::vector<bool> written = {true,  true, true, true, true, true,  true,  true, true,
                                     false, true, true, true, true, false, false, false};
  REQUIRE(lines.size() == written.size());
  CHECK(checkStoredJson(lines, &written) == 13);
}

TEST_CASE("stored JSON from the fast path: random objects and events", "[value_reader]") {
  std::mt19937 rng(20261130);
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const char* const keys[] = {R"("metadata")", R"("managedFields")", R"("object")",  R"("type")",
                              R"("kind")",     R"("items")",         R"("name")",    R"("a")",
                              R"("b\u0001")",  R"("\u00e9")",        "\"\xC3\xA9\"", R"("")"};
  std::function<std::string(int)> value = [&](int depth) -> std::string {
    const int r = pick(10);
    if (depth < 4 && r < 4) {
      std::string out = "{";
      for (int i = pick(5); i > 0; --i) {
        out += std::string(keys[pick(std::size(keys))]) + ":" + value(depth + 1);
        if (i > 1) out += ",";
      }
      return out + "}";
    }
    if (depth < 4 && r < 5) return "[" + value(depth + 1) + "," + value(depth + 1) + "]";
    return r < 8 ? randomValue(rng, 3) : kStrings[pick(std::size(kStrings))];
  };
  std::vector<std::string> lines;
  for (int i = 0; i < repetitions(4000); ++i) {
    // Appended piece by piece: GCC 12 at -O3 warns (-Wrestrict, a false
    // positive) on a literal + std::string temporary here.
    std::string object = R"({"metadata":)";
    object += value(1);
    object += ",";
    object += keys[pick(std::size(keys))];
    object += ":";
    object += value(1);
    object += "}";
    switch (pick(3)) {
      case 0:
        lines.push_back(R"({"type":"ADDED","object":)" + object + "}");
        break;
      case 1:
        lines.push_back(object);
        break;
      default:
        lines.push_back(value(0));
    }
  }
  // Many values are written by the fast path (the rest are Lists, arrays or
  // values with -0.0 or surrogate escapes); each must match.
  CHECK(checkStoredJson(lines) > repetitions(4000) / 8);
}

namespace {

struct Read {
  std::string value, error, stored;
  std::uint64_t line, offset, endOffset;
  bool operator==(const Read&) const = default;
};

std::vector<Read> readWith(const std::string& text, bool wholeLines) {
  std::istringstream in(text);
  ingest::ValueReader::Options options;
  options.maxValueBytes = 200;
  options.dropManagedFields = true;
  options.storedJson = true;
  options.wholeLines = wholeLines;
  ingest::ValueReader reader(in, options);
  ingest::DecodedValue v;
  std::vector<Read> out;
  while (reader.next(&v)) {
    out.push_back({v.error.empty() ? v.value.dump() : "", v.error, v.storedObjectJson, v.line,
                   v.offset, v.endOffset});
  }
  out.push_back({"end", "", "", 0, reader.bytesConsumed(), 0});
  return out;
}

}  // namespace

// The JSON Lines fast path (ValueReader::Options::wholeLines) must give what
// framing byte by byte gives: values, errors, stored JSON, lines and offsets.
TEST_CASE("whole-line reading gives what byte-by-byte framing gives", "[value_reader]") {
  const std::string big(300, 'x');
  const std::vector<std::string> pieces = {
      R"({"a":1})"
      "\n",
      R"({"b":[1,2]}   )"
      "\n",
      R"({"crlf":true})"
      "\r\n",
      R"({"two":1} {"values":2})"
      "\n",
      R"({"trailing":1} xyz)"
      "\n",
      R"([{"kind":"Pod"}])"
      "\n",
      R"({"n":-0,"s":"\ud83d\ude00"})"
      "\n",
      R"({"bad":})"
      "\n",
      R"({"big":")" + big + "\"}\n",
      "{\n  \"pretty\": {\n    \"x\": [1,\n 2]\n  }\n}\n",
      R"({"cut":"short)"
      "\n",
      R"({"type":"ADDED","object":{"metadata":{"name":"a","managedFields":[1]}}})"
      "\n",
      "\n\n  ",
      R"({"after":"blank lines"})"
      "\n",
      "stray text\n",
      R"({"open":)"
      "\n"
      R"({"next":"at column 0"})"
      "\n",
      R"({"last":"no newline"})",
  };
  std::string all;
  for (const auto& p : pieces) all += p;
  CHECK(readWith(all, true) == readWith(all, false));
  // Random splices of the pieces, so each meets each as a neighbour.
  std::mt19937 rng(20261130);
  for (int round = 0; round < repetitions(300); ++round) {
    std::string text;
    for (int i = 0; i < 12; ++i) text += pieces[rng() % pieces.size()];
    INFO(text);
    CHECK(readWith(text, true) == readWith(text, false));
  }
}
