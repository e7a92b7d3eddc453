// ingestStream (ingest/stream_ingest.h): the reader thread and the writer
// give the ledger ledger-ingest would write on one thread - same records,
// chain, cursors and rejections in order - and errors on either side stop
// both threads without losing what was read before them.
#include <stdexcept>
#include <streambuf>

#include "ingest/stream_ingest.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::testing;

namespace {

// Namespaces with a padding label (so the stream spans many chunks), bad
// values, a List with a bad item, bookmarks and an ERROR event in between.
std::string mixedStream(int namespaces) {
  const std::string padding(900, 'p');
  std::string out;
  for (int i = 0; i < namespaces; ++i) {
    Json object = {{"apiVersion", "v1"},
                   {"kind", "Namespace"},
                   {"metadata", meta("", "ns-" + std::to_string(i % 97), "uid-" + std::to_string(i),
                                     std::to_string(i + 1))}};
    object["metadata"]["labels"] = {{"pad", padding}};
    object["metadata"]["managedFields"] = Json::array({{{"manager", "kubectl"}}});
    out += event(i % 5 == 0 ? "ADDED" : "MODIFIED", object);
    if (i % 50 == 7) out += "{\"type\": \"ADDED\", \"object\": {\"kind\": \n";  // cut short
    if (i % 70 == 3)
      out += R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":")" +
             std::to_string(i + 1) + "\"}}}\n";
    if (i % 90 == 5) {
      out += R"({"apiVersion":"v1","kind":"NamespaceList","items":[{"metadata":{"name":"l)" +
             std::to_string(i) + R"("}},{"metadata":{}}]})" + "\n";
    }
    if (i == 11)
      out += R"({"type":"ERROR","object":{"code":410,"reason":"Gone"}})"
             "\n";
  }
  return out;
}

struct StreamOutcome {
  ingest::StreamTotals totals;
  ingest::IngestStats stats;
  std::vector<std::string> rejections;
};

StreamOutcome ingestInBatches(Ledger& ledger, const std::string& text,
                              const ingest::StreamOptions& base) {
  std::istringstream in(text);
  ingest::IngestOptions io;
  io.batchRecords = 13;
  std::int64_t clock = 1700000000LL * 1000000000LL;
  io.clock = [&] { return clock += 1000; };
  ingest::Ingester ingester(ledger, io);
  StreamOutcome out;
  ingest::StreamOptions options = base;
  options.onRejected = [&](const ingest::StreamRejection& r) {
    out.rejections.push_back(std::to_string(r.line) + ":" + std::to_string(r.offset) + " " +
                             r.reason);
  };
  out.totals = ingest::ingestStream(in, "src", ingester, options);
  ingester.flush();
  out.stats = ingester.stats();
  return out;
}

// A stream that serves `text` and then fails the way a broken disk does.
class FailingBuffer : public std::streambuf {
 public:
  explicit FailingBuffer(std::string text) : text_(std::move(text)) {
    setg(text_.data(), text_.data(), text_.data() + text_.size());
  }

 protected:
  int_type underflow() override { throw std::runtime_error("disk gone"); }

 private:
  std::string text_;
};

}  // namespace

TEST_CASE("pipelined ingest writes the ledger a single thread writes", "[ingest][stream]") {
  const std::string text = mixedStream(600);
  REQUIRE(text.size() > 500 * 1024);  // many 64 KiB chunks
  TempDir dir;
  auto single = openLedger(dir.path("single"));
  ingest::StreamOptions one;
  one.pipelined = false;
  const StreamOutcome a = ingestInBatches(*single, text, one);

  // Pipelined, with the reader's fast paths on (managedFields dropped while
  // parsing, stored JSON written from simdjson) and a short queue so the
  // reader waits for the writer many times.
  auto piped = openLedger(dir.path("piped"));
  ingest::StreamOptions two;
  two.reader.dropManagedFields = true;
  two.reader.storedJson = true;
  two.bytesAhead = 100 * 1024;
  const StreamOutcome b = ingestInBatches(*piped, text, two);

  CHECK(a.stats.recorded > 600);
  CHECK(a.stats.bookmarks > 0);
  CHECK(a.stats.errorEvents == 1);
  CHECK(a.rejections.size() > 10);
  CHECK(b.totals.values == a.totals.values);
  CHECK(b.totals.rejected == a.totals.rejected);
  CHECK(b.totals.bytes == text.size());
  CHECK(a.totals.bytes == text.size());
  CHECK(b.rejections == a.rejections);
  CHECK(b.stats.recorded == a.stats.recorded);
  CHECK(b.stats.duplicates == a.stats.duplicates);
  CHECK(b.stats.recordedByKind == a.stats.recordedByKind);
  REQUIRE(piped->lastSeq() == single->lastSeq());
  CHECK(piped->lastHash() == single->lastHash());  // the same bytes, record for record
  Cursor ca, cb;
  REQUIRE(single->cursor("src", &ca).isOk());
  REQUIRE(piped->cursor("src", &cb).isOk());
  CHECK(ca == cb);
  CHECK(cb.position == text.size());
  Record r;
  REQUIRE(piped->read(1, &r).isOk());
  CHECK(r.objectJson.find("managedFields") == std::string::npos);
}

TEST_CASE("a stop flag set before reading records nothing", "[ingest][stream]") {
  TempDir dir;
  auto ledger = openLedger(dir.path("l"));
  std::atomic<bool> stop = true;
  for (bool pipelined : {false, true}) {
    ingest::StreamOptions options;
    options.pipelined = pipelined;
    options.stop = &stop;
    const StreamOutcome o = ingestInBatches(*ledger, mixedStream(20), options);
    CHECK(o.totals.values == 0);
    CHECK(ledger->lastSeq() == 0);
  }
}

TEST_CASE("a ledger that refuses writes stops the reader and the error reaches the caller",
          "[ingest][stream]") {
  TempDir dir;
  { auto created = openLedger(dir.path("l")); }
  std::unique_ptr<Ledger> readOnly;
  Ledger::Options lo;
  lo.readOnly = true;
  REQUIRE(Ledger::open(dir.path("l"), lo, &readOnly).isOk());
  const std::string text = mixedStream(2000);  // ~2 MB, far more than the queue holds
  for (bool pipelined : {false, true}) {
    INFO("pipelined " << pipelined);
    std::istringstream in(text);
    ingest::IngestOptions io;
    io.batchRecords = 5;
    ingest::Ingester ingester(*readOnly, io);
    ingest::StreamOptions options;
    options.pipelined = pipelined;
    options.bytesAhead = 64 * 1024;  // the reader is blocked on a full queue when the writer fails
    CHECK_THROWS_AS(ingest::ingestStream(in, "src", ingester, options), ingest::LedgerError);
  }
  CHECK(readOnly->lastSeq() == 0);
}

TEST_CASE("an input error is raised after every value read before it is recorded",
          "[ingest][stream]") {
  // More than ValueReader's first 64 KiB read, so values before the failing
  // read are complete; the one cut by the failure is not recorded.
  const std::string text = mixedStream(120);
  REQUIRE(text.size() > 100 * 1024);
  for (bool pipelined : {false, true}) {
    INFO("pipelined " << pipelined);
    TempDir dir;
    auto ledger = openLedger(dir.path("l"));
    FailingBuffer buffer(text.substr(0, 100 * 1024));
    std::istream in(&buffer);
    in.exceptions(std::ios::badbit);
    ingest::IngestOptions io;
    io.batchRecords = 1000;
    ingest::Ingester ingester(*ledger, io);
    ingest::StreamOptions options;
    options.pipelined = pipelined;
    CHECK_THROWS_WITH(ingest::ingestStream(in, "src", ingester, options), "disk gone");
    ingester.flush();
    // Every namespace event lies wholly within the first 64 KiB read or not.
    CHECK(ledger->lastSeq() > 40);
    CHECK(ledger->lastSeq() < 120);
    Cursor c;
    REQUIRE(ledger->cursor("src", &c).isOk());
    CHECK(c.position < 100 * 1024);  // the last recorded value's end, not the bytes read
  }
}
