#include "ingest/value_reader.h"

#include <simdjson.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "ingest/input_limits.h"
#include "ingest/json_numbers.h"
#include "ingest/projector.h"
#include "ingest/simd_json.h"
#include "ingest/yaml_json.h"

namespace ledger::ingest {

namespace {

constexpr std::size_t kChunk = 64 * 1024;

bool isBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// "[json.exception.parse_error.101] parse error at ..." -> "parse error at ..."
std::string cleanJsonError(const std::string& what) {
  auto close = what.find("] ");
  return close == std::string::npos ? what : what.substr(close + 2);
}

// The hot path of ingest: simdjson's DOM parser (SIMD, chosen at run time)
// reads the value and the nlohmann value is built straight from its tape.
// nlohmann's own parser spent most of ingest's time lexing (docs/performance.md,
// "Ingest"). The result must be exactly what nlohmann::json::parse
// gives, so anything simdjson would not settle identically returns false
// and nlohmann parses the value itself, errors and messages included:
// - integers keep nlohmann's types: non-negative -> unsigned, negative ->
//   integer; simdjson's doubles are correctly rounded, like strtod;
// - a negative zero in floating point ("-0.0") and escapes of UTF-16
//   surrogates (backslash-u D800 to DFFF: nlohmann's pairing rules) go to
//   nlohmann; "-0" is an integer 0 to both (nlohmann's signed, ours
//   unsigned: the same value and text, and every reader of numbers asks
//   is_number_integer() before is_number_unsigned());
// - duplicate keys: the last one wins, as in nlohmann;
// - parse errors, too deep nesting, numbers out of range: nlohmann (an
//   integer beyond 64 bits becomes its digits there, json_numbers.h).
struct NotExact {};

// A watched object's metadata.managedFields is left out while building
// when ValueReader::Options asks (JsonRole, simd_json.h): the API server's
// field-ownership bookkeeping is about half of every object's bytes, and
// the Ingester drops it anyway (ingester.cpp). Only the object
// normalizeValue() will hand on is touched: the "object" of a watch event,
// each of a List's "items", or the value itself; never a nested metadata
// such as a pod template's.
//
// With `onlyIdentity`, a watched object gets only the members normalizeValue()
// and the Ingester read (apiVersion, kind, metadata): its projection and
// stored JSON were written from the DOM already (Options::projection).
void buildJson(simdjson::dom::element e, nlohmann::json& out, JsonRole role, bool onlyIdentity) {
  using T = simdjson::dom::element_type;
  switch (e.type()) {
    case T::OBJECT: {
      out = nlohmann::json::object();
      auto& members = *out.get_ptr<nlohmann::json::object_t*>();
      const bool identity = onlyIdentity && role == JsonRole::kObject;
      const bool identityMetadata = onlyIdentity && role == JsonRole::kMetadata;
      for (auto [key, value] : simdjson::dom::object(e)) {
        if (role == JsonRole::kMetadata && key == "managedFields") continue;
        if (identity && key != "metadata" && key != "kind" && key != "apiVersion") continue;
        // What objectProblem() and identityOf() read: labels, annotations
        // and owner references would be built and freed for nothing.
        if (identityMetadata && key != "name" && key != "namespace" && key != "uid" &&
            key != "resourceVersion")
          continue;
        buildJson(value, members[std::string(key)], memberRole(role, key), onlyIdentity);
      }
      return;
    }
    case T::ARRAY: {
      out = nlohmann::json::array();
      auto& items = *out.get_ptr<nlohmann::json::array_t*>();
      const simdjson::dom::array array(e);
      items.reserve(array.size());
      const JsonRole child = elementRole(role);
      for (simdjson::dom::element item : array) {
        buildJson(item, items.emplace_back(), child, onlyIdentity);
      }
      return;
    }
    case T::STRING:
      out = std::string(std::string_view(e));
      return;
    case T::INT64: {
      const std::int64_t v = std::int64_t(e);
      if (v >= 0) {
        out = static_cast<std::uint64_t>(v);
      } else {
        out = v;
      }
      return;
    }
    case T::UINT64:
      out = std::uint64_t(e);
      return;
    case T::DOUBLE: {
      const double v = double(e);
      if (v == 0 && std::signbit(v)) throw NotExact{};
      out = v;
      return;
    }
    case T::BOOL:
      out = bool(e);
      return;
    case T::NULL_VALUE:
      out = nullptr;
      return;
  }
}

// The object a value records, when it gives exactly one event that records
// one, decided as normalizeValue() decides (the last of duplicate keys
// wins): an ADDED, MODIFIED or DELETED event's "object", or a bare object.
// Bookmarks and errors keep their whole object (the Ingester reads them);
// List items are completed by normalizeValue() first.
std::optional<simdjson::dom::element> recordedObject(simdjson::dom::element root, JsonRole role) {
  if (role == JsonRole::kObject) return root;
  if (role != JsonRole::kEvent) return std::nullopt;
  std::string_view type;
  std::optional<simdjson::dom::element> object;
  for (auto [key, value] : simdjson::dom::object(root)) {
    if (key == "type") {
      if (value.get(type) != simdjson::SUCCESS) type = {};
    } else if (key == "object") {
      object = value;
    }
  }
  if (type != "ADDED" && type != "MODIFIED" && type != "DELETED") return std::nullopt;
  if (!object || object->type() != simdjson::dom::element_type::OBJECT) return std::nullopt;
  return object;
}

// `readableAfter`: how many bytes after `text` may be read (simdjson reads up
// to SIMDJSON_PADDING past a value's end; with that many, the value is parsed
// where it lies instead of copied).
bool parseExact(std::string_view text, std::size_t readableAfter,
                const ValueReader::Options& options, DecodedValue* out) {
  for (auto at = text.find("\\u"); at != std::string_view::npos; at = text.find("\\u", at + 2)) {
    if (at + 2 < text.size() && (text[at + 2] == 'd' || text[at + 2] == 'D')) return false;
  }
  // One parser and padded buffer per thread, reused: sized by the largest value.
  // Its depth limit is the reader's (input_limits.h): a deeper value fails
  // here and the framing rejects it with its position.
  thread_local simdjson::dom::parser parser = [] {
    simdjson::dom::parser p;
    if (p.allocate(simdjson::dom::MINIMAL_DOCUMENT_CAPACITY, kMaxNestingDepth) != simdjson::SUCCESS)
      throw std::bad_alloc();
    return p;
  }();
  thread_local std::string padded;
  const char* input = text.data();
  if (readableAfter < simdjson::SIMDJSON_PADDING) {
    padded.assign(text);
    padded.resize(text.size() + simdjson::SIMDJSON_PADDING);
    input = padded.data();
  }
  simdjson::dom::element root;
  if (parser.parse(input, text.size(), false).get(root) != simdjson::SUCCESS) return false;
  const bool needRole = options.dropManagedFields || options.storedJson || options.projection;
  const JsonRole role = needRole ? rootRole(root) : JsonRole::kPlain;
  const std::optional<simdjson::dom::element> recorded =
      options.projection ? recordedObject(root, role) : std::nullopt;
  try {
    buildJson(root, out->value, options.dropManagedFields ? role : JsonRole::kPlain,
              recorded.has_value());
  } catch (const NotExact&) {
    return false;
  }
  if (options.storedJson) out->storedObjectJson.reserve(text.size());
  bool negativeZero = false;
  if (options.storedJson &&
      !storedWatchedObject(root, role, out->storedObjectJson, &negativeZero)) {
    out->storedObjectJson.clear();
  }
  // buildJson finds negative zeros in what it builds; the stored JSON, which
  // covers the recorded object, finds them in what buildJson left out.
  if (recorded && negativeZero) return false;
  if (recorded) {
    std::string rejection;
    out->projection = projectObject(JsonView(*recorded), options.projectionOptions, &rejection);
    // A rejected object goes the slow way, where prepareEvent rejects it.
    if (!rejection.empty()) return false;
  }
  return true;
}

bool hasYamlContent(std::string_view line) {
  for (char c : line) {
    if (c == '#') return false;
    if (!isBlank(c)) return true;
  }
  return false;
}

}  // namespace

ValueReader::ValueReader(std::istream& in, std::uint64_t maxValueBytes)
    : in_(in), maxValueBytes_(maxValueBytes) {}

ValueReader::ValueReader(std::istream& in, const Options& options)
    : in_(in), maxValueBytes_(options.maxValueBytes), options_(options) {
  if (options_.projection) options_.dropManagedFields = options_.storedJson = true;
}

bool ValueReader::fill() {
  if (eof_) return false;
  const std::size_t old = buffer_.size();
  buffer_.resize(old + kChunk);
  in_.read(buffer_.data() + old, static_cast<std::streamsize>(kChunk));
  const auto got = static_cast<std::size_t>(in_.gcount());
  buffer_.resize(old + got);
  if (got == 0) {
    eof_ = true;
    return false;
  }
  return true;
}

void ValueReader::compact() {
  if (pos_ == 0) return;
  buffer_.erase(0, pos_);
  bufferBase_ += pos_;
  pos_ = 0;
}

bool ValueReader::next(DecodedValue* out) {
  *out = DecodedValue{};
  if (mode_ == Mode::kUnknown) {
    // Skip a UTF-8 byte order mark and blank space to see the first byte.
    while (true) {
      if (pos_ >= buffer_.size() && !fill()) return false;
      if (bufferBase_ + pos_ == 0 && buffer_.size() >= 3 &&
          buffer_.compare(0, 3, "\xEF\xBB\xBF") == 0) {
        pos_ = 3;
        continue;
      }
      const char c = buffer_[pos_];
      if (isBlank(c)) {
        if (c == '\n') ++line_;
        ++pos_;
        continue;
      }
      mode_ = (c == '{' || c == '[') ? Mode::kJson : Mode::kYaml;
      break;
    }
  }
  const bool got = mode_ == Mode::kJson ? nextJson(out) : nextYaml(out);
  consumed_ = bufferBase_ + pos_;
  return got;
}

bool ValueReader::nextJson(DecodedValue* out) {
  // Moving the unread bytes to the front costs their size: done before
  // every value it moved each input byte several times (a third of the
  // reading thread's copying); once half the buffer is read, at most once.
  if (pos_ * 2 >= buffer_.size()) compact();
  // Blank space between values.
  while (true) {
    if (pos_ >= buffer_.size() && !fill()) return false;
    const char c = buffer_[pos_];
    if (!isBlank(c)) break;
    if (c == '\n') ++line_;
    ++pos_;
  }
  out->line = line_;
  out->offset = bufferBase_ + pos_;
  const std::size_t start = pos_;
  const char first = buffer_[pos_];
  if (first != '{' && first != '[') {
    // Stray text between values: skip the rest of its line.
    while (true) {
      if (pos_ >= buffer_.size() && !fill()) break;
      if (buffer_[pos_] == '\n') break;
      ++pos_;
    }
    out->error = "unexpected text outside a JSON value";
    out->endOffset = bufferBase_ + pos_;
    return true;
  }
  if (options_.wholeLines && nextWholeLine(out)) return true;
  std::size_t depth = 0;
  std::uint64_t tooDeepLine = 0;  // where the value first nests past the limit
  bool inString = false;
  bool escaped = false;
  while (true) {
    if (pos_ >= buffer_.size() && !fill()) {
      out->error = "input ends inside a JSON value";
      out->endOffset = bufferBase_ + pos_;
      return true;
    }
    const char c = buffer_[pos_];
    if (pos_ - start > maxValueBytes_) {
      out->error = "value larger than " + std::to_string(maxValueBytes_) + " bytes";
      // Resynchronise at the next line that starts a value.
      while (true) {
        if (pos_ >= buffer_.size() && !fill()) break;
        if (buffer_[pos_] == '\n') {
          ++line_;
          if (pos_ + 1 >= buffer_.size()) fill();
          if (pos_ + 1 < buffer_.size() && (buffer_[pos_ + 1] == '{' || buffer_[pos_ + 1] == '[')) {
            ++pos_;
            break;
          }
        }
        ++pos_;
        if (pos_ > (1 << 20)) {  // keep memory bounded while skipping
          compact();
        }
      }
      out->endOffset = bufferBase_ + pos_;
      return true;
    }
    if (inString && !escaped && c != '"' && c != '\\' && c != '\n') {
      // Most bytes of a value are string contents that change nothing:
      // skip to the next quote, backslash or newline in one tight loop
      // (never past the size limit, so that check fires where it did).
      const char* p = buffer_.data() + pos_ + 1;
      const std::uint64_t limit =
          maxValueBytes_ < buffer_.size() ? start + maxValueBytes_ + 1 : buffer_.size();
      const char* end = buffer_.data() + std::min<std::uint64_t>(buffer_.size(), limit);
      while (p < end && *p != '"' && *p != '\\' && *p != '\n') ++p;
      pos_ = static_cast<std::size_t>(p - buffer_.data());
      continue;
    }
    if (inString) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        inString = false;
      } else if (c == '\n') {
        // JSON strings cannot hold a raw newline: this value was cut short.
        ++line_;
        ++pos_;
        out->error = "line ends inside a JSON string (value cut short)";
        out->endOffset = bufferBase_ + pos_;
        return true;
      }
    } else if (c == '"') {
      inString = true;
    } else if (c == '{' || c == '[') {
      if (depth > 0 && c == '{' && pos_ > start && buffer_[pos_ - 1] == '\n') {
        // A value starts at column 0 while this one is open: this one is
        // truncated. Leave the new value for the next call.
        out->error = "value cut short: a new value starts at line " + std::to_string(line_);
        out->endOffset = bufferBase_ + pos_;
        return true;
      }
      if (++depth > kMaxNestingDepth && tooDeepLine == 0) tooDeepLine = line_;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) {
        ++pos_;
        break;
      }
    } else if (c == '\n') {
      ++line_;
    }
    ++pos_;
  }
  out->endOffset = bufferBase_ + pos_;
  if (tooDeepLine != 0) {
    // Never parsed: every step after the parser (conversion, dump, the
    // projection) would recurse once per level (input_limits.h).
    out->error = "JSON nested deeper than " + std::to_string(kMaxNestingDepth) +
                 " levels at line " + std::to_string(tooDeepLine);
    return true;
  }
  std::string_view text(buffer_.data() + start, pos_ - start);
  if (parseExact(text, buffer_.size() - pos_, options_, out)) return true;
  out->value = nlohmann::json();
  out->storedObjectJson.clear();
  out->projection.clear();
  try {
    // An integer beyond 64 bits (which simdjson refuses) arrives here; it
    // is kept as its digits, never as a double (json_numbers.h).
    out->value = parseJsonKeepingIntegers(text);
  } catch (const nlohmann::json::parse_error& e) {
    const std::size_t at = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    const auto lineInValue = static_cast<std::uint64_t>(
        std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
    out->error = "invalid JSON at line " + std::to_string(out->line + lineInValue) + ": " +
                 cleanJsonError(e.what());
  } catch (const nlohmann::json::exception& e) {
    // Well-formed but unrepresentable, e.g. a number beyond double range
    // (out_of_range.406): rejected like any bad value, never thrown.
    out->value = nlohmann::json();
    out->error =
        "invalid JSON at line " + std::to_string(out->line) + ": " + cleanJsonError(e.what());
  }
  return true;
}

// JSON Lines (a watch stream, kubectl get -w -o json piped through jq -c,
// the generator): when the rest of the line, trailing blanks aside, is one
// value the fast path parses, that is the value the framing below would find
// - a complete value cannot be followed by anything but blanks on its line,
// and it holds no raw newline - so the byte-by-byte framing (a quarter of
// the reading thread) is skipped. Anything else (pretty-printed JSON, two
// values on a line, errors, values the fast path leaves to nlohmann) goes
// through the framing as before, with the same values, errors and offsets.
bool ValueReader::nextWholeLine(DecodedValue* out) {
  std::size_t scanned = pos_;
  std::size_t eol;
  while (true) {
    const void* nl = std::memchr(buffer_.data() + scanned, '\n', buffer_.size() - scanned);
    if (nl != nullptr) {
      eol = static_cast<std::size_t>(static_cast<const char*>(nl) - buffer_.data());
      break;
    }
    scanned = buffer_.size();
    if (scanned - pos_ > maxValueBytes_) return false;
    if (!fill()) {
      eol = buffer_.size();
      break;
    }
  }
  std::size_t end = eol;
  while (end > pos_ && isBlank(buffer_[end - 1])) --end;
  if (end == pos_ || end - pos_ > maxValueBytes_) return false;
  if (buffer_[end - 1] != '}' && buffer_[end - 1] != ']') return false;
  if (!parseExact(std::string_view(buffer_.data() + pos_, end - pos_), buffer_.size() - end,
                  options_, out)) {
    out->value = nlohmann::json();
    out->storedObjectJson.clear();
    out->projection.clear();
    return false;
  }
  pos_ = end;
  out->endOffset = bufferBase_ + pos_;
  return true;
}

namespace {

// Whether `line` (without its newline) starts a document: `---`, alone or
// followed by blank space and content.
bool isYamlSeparator(std::string_view line) {
  return line.substr(0, 3) == "---" && (line.size() == 3 || line[3] == ' ' || line[3] == '\t');
}

}  // namespace

void ValueReader::skipRestOfLine() {
  while (true) {
    if (const std::size_t nl = buffer_.find('\n', pos_); nl != std::string::npos) {
      pos_ = nl + 1;
      ++line_;
      return;
    }
    pos_ = buffer_.size();
    compact();  // what is skipped is never kept
    if (!fill()) return;
  }
}

void ValueReader::skipYamlDocument() {
  while (true) {
    compact();
    // The first bytes of the line are enough to tell a marker.
    while (buffer_.size() - pos_ < 4 && buffer_.find('\n', pos_) == std::string::npos && fill()) {
    }
    if (pos_ >= buffer_.size()) return;
    std::string_view head(buffer_.data() + pos_, std::min<std::size_t>(4, buffer_.size() - pos_));
    if (const std::size_t nl = head.find('\n'); nl != std::string_view::npos)
      head = head.substr(0, nl);
    if (!head.empty() && head.back() == '\r') head.remove_suffix(1);
    if (isYamlSeparator(head) || head == "...") return;
    skipRestOfLine();
  }
}

bool ValueReader::nextYaml(DecodedValue* out) {
  compact();
  std::string document;
  std::uint64_t firstContentLine = 0;
  std::uint64_t docOffset = bufferBase_ + pos_;
  bool sawContent = false;
  // The document (or the line being read) passed maxValueBytes: rejected
  // whole, and its remaining lines skipped without being kept, so that
  // neither a huge document nor a huge line grows memory past the limit,
  // and no part of it is read as a document of its own.
  const auto tooLarge = [&](bool midLine) {
    out->error = "document larger than " + std::to_string(maxValueBytes_) + " bytes";
    out->line = sawContent ? firstContentLine : line_;
    out->offset = docOffset;
    if (midLine) skipRestOfLine();
    skipYamlDocument();
    out->endOffset = bufferBase_ + pos_;
    return true;
  };
  while (true) {
    // One line [pos_, eol).
    std::size_t eol;
    std::size_t scanned = pos_;
    while ((eol = buffer_.find('\n', scanned)) == std::string::npos) {
      if (document.size() + (buffer_.size() - pos_) > maxValueBytes_) return tooLarge(true);
      scanned = buffer_.size();
      if (!fill()) break;
    }
    if (pos_ >= buffer_.size() && eof_) break;
    const bool lastLine = eol == std::string::npos;
    if (lastLine) eol = buffer_.size();
    std::string_view line(buffer_.data() + pos_, eol - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const bool separator = isYamlSeparator(line);
    const bool end = line == "...";
    if ((separator || end) && sawContent) break;  // leave the separator for the next call
    const std::uint64_t thisLine = line_;
    pos_ = lastLine ? eol : eol + 1;
    ++line_;
    if (separator) {
      // Content may follow the marker on the same line ("--- {a: 1}").
      std::string_view rest = line.substr(3);
      if (hasYamlContent(rest)) {
        document.append(rest).push_back('\n');
        sawContent = true;
        firstContentLine = thisLine;
        docOffset = bufferBase_ + pos_;
      }
      continue;
    }
    if (end) continue;
    if (!sawContent && hasYamlContent(line)) {
      sawContent = true;
      firstContentLine = thisLine;
    }
    if (sawContent || !document.empty()) document.append(line).push_back('\n');
    if (!sawContent) document.clear();
    if (document.size() > maxValueBytes_) return tooLarge(false);
    if (lastLine) break;
    if (!sawContent) docOffset = bufferBase_ + pos_;
  }
  if (!sawContent) return false;
  out->line = firstContentLine;
  out->offset = docOffset;
  out->endOffset = bufferBase_ + pos_;
  // YAML is Unicode, but yaml-cpp passes any bytes through: a string that is
  // not UTF-8 cannot become JSON (nlohmann's dump throws on it), so such a
  // document is rejected at the line of its first bad byte (a UTF-8 sequence
  // never spans a newline).
  if (!simdjson::validate_utf8(document.data(), document.size())) {
    std::uint64_t line = firstContentLine;
    for (std::size_t begin = 0; begin < document.size(); ++line) {
      std::size_t nl = document.find('\n', begin);
      if (nl == std::string::npos) nl = document.size();
      if (!simdjson::validate_utf8(document.data() + begin, nl - begin)) break;
      begin = nl + 1;
    }
    out->error = "invalid YAML at line " + std::to_string(line) + ": not valid UTF-8";
    return true;
  }
  try {
    // An alias may not expand the document past what it could hold written
    // out (yaml_json.h).
    out->value = parseYamlDocument(document, YamlLimits{maxValueBytes_});
  } catch (const YAML::Exception& e) {
    // The mark is 0-based within the document; the position is the file's.
    out->error =
        "invalid YAML at line " +
        std::to_string(firstContentLine + static_cast<std::uint64_t>(std::max(0, e.mark.line)));
    if (!e.mark.is_null()) out->error += ", column " + std::to_string(e.mark.column + 1);
    out->error += ": " + e.msg;
  } catch (const std::exception& e) {
    out->error = std::string("invalid YAML: ") + e.what();
  }
  return true;
}

}  // namespace ledger::ingest
