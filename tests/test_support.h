// Shared fakes and helpers for the tests: a temporary directory, builders
// for the Kubernetes objects the ledger interprets, and a one-call path from
// events to a ledger, a folded state and a report.
//
// Test-only; not thread-safe. Helpers throw (via Catch2 REQUIRE) on failure.
#pragma once

// The standard, Catch2, JSON, RocksDB and ledger headers the tests share.
#include "tests/pch/tests_pch.h"
#include "tests/run_end.h"

namespace ledger::testing {

using Json = nlohmann::json;

// The sanitizer builds (tools/test.sh) run every case; a case that repeats
// one check over many random inputs repeats it a quarter as often there,
// where each run costs many times more. GCC defines these macros under
// -fsanitize=address and -fsanitize=thread.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizerBuild = true;
#else
inline constexpr bool kSanitizerBuild = false;
#endif
constexpr int repetitions(int normal) { return kSanitizerBuild ? std::max(1, normal / 4) : normal; }

class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("ledger-test-" + std::to_string(rd()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string path(const std::string& sub = "") const { return (path_ / sub).string(); }

 private:
  std::filesystem::path path_;
};

// Every value a ValueReader decodes from `text`, in order.
inline std::vector<ingest::DecodedValue> readValues(const std::string& text) {
  std::istringstream in(text);
  ingest::ValueReader reader(in);
  std::vector<ingest::DecodedValue> out;
  ingest::DecodedValue v;
  while (reader.next(&v)) out.push_back(std::move(v));
  return out;
}

inline std::unique_ptr<Ledger> openLedger(const std::string& dir, const Ledger::Options& o) {
  std::unique_ptr<Ledger> ledger;
  Status st = Ledger::open(dir, o, &ledger);
  INFO(st.toString());
  REQUIRE(st.isOk());
  return ledger;
}

inline std::unique_ptr<Ledger> openLedger(const std::string& dir, bool sync = false) {
  Ledger::Options o;
  o.sync = sync;
  return openLedger(dir, o);
}

// Ingests a text stream (any accepted form) the way ledger-ingest does.
struct IngestOutcome {
  std::uint64_t values = 0;
  std::uint64_t rejected = 0;
  std::vector<std::string> errors;
  ingest::IngestStats stats;
};

#ifdef LEDGER_SOURCE_DIR
// The bundled demo cluster's event stream (tools/demo/cluster-events.jsonl).
inline std::string demoStream() {
  std::ifstream in(LEDGER_SOURCE_DIR "/tools/demo/cluster-events.jsonl");
  REQUIRE(in);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
#endif

// `batchRecords` is small by default, so batches split mid-stream.
inline IngestOutcome ingestText(Ledger& ledger, const std::string& text,
                                const std::string& source = "test", std::size_t batchRecords = 7) {
  std::istringstream in(text);
  ingest::IngestOptions io;
  io.batchRecords = batchRecords;
  std::int64_t fakeClock = 1700000000LL * 1000000000LL;
  io.clock = [&] { return fakeClock += 1000000; };
  ingest::Ingester ingester(ledger, io);
  IngestOutcome out;
  ingest::StreamOptions options;
  options.onRejected = [&](const ingest::StreamRejection& r) {
    out.errors.push_back("line " + std::to_string(r.line) + ": " + r.reason);
  };
  const ingest::StreamTotals totals = ingest::ingestStream(in, source, ingester, options);
  out.values = totals.values;
  out.rejected = totals.rejected;
  ingester.flush();
  out.stats = ingester.stats();
  return out;
}

inline std::string event(const std::string& type, const Json& object,
                         const std::string& time = "") {
  Json e = {{"type", type}, {"object", object}};
  if (!time.empty()) e["time"] = time;
  return e.dump() + "\n";
}

inline Json meta(const std::string& ns, const std::string& name, const std::string& uid,
                 const std::string& rv) {
  Json m = {{"name", name},
            {"uid", uid},
            {"resourceVersion", rv},
            {"creationTimestamp", "2026-11-01T00:00:00Z"}};
  if (!ns.empty()) m["namespace"] = ns;
  return m;
}

// A shell command's exit code (-1: ended by a signal) and what it printed
// on stdout and stderr together.
struct CommandRun {
  int exitCode = -1;
  std::string output;
};

inline CommandRun runCommand(const std::string& command) {
  CommandRun r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer{};
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) {
    r.output.append(buffer.data(), n);
  }
  const int status = ::pclose(pipe);
  if (WIFEXITED(status)) r.exitCode = WEXITSTATUS(status);
  return r;
}

// A tmpfs of `bytes` mounted at `dir` for the life of the object, to fill up;
// mounted() is false when the process may not mount (mount(2) needs
// CAP_SYS_ADMIN), and the test then skips with a message.
class SmallDisk {
 public:
  SmallDisk(const std::string& dir, std::size_t bytes) : dir_(dir) {
    std::filesystem::create_directories(dir);
    const std::string data = "size=" + std::to_string(bytes);
    mounted_ = ::mount("tmpfs", dir.c_str(), "tmpfs", 0, data.c_str()) == 0;
  }
  ~SmallDisk() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;
  bool mounted() const { return mounted_; }

 private:
  std::string dir_;
  bool mounted_ = false;
};

// The path of a program under test, from the environment variable `name`
// (tests/meson.build sets it to the built binary).
inline std::string programFromEnv(const char* name) {
  const char* path = std::getenv(name);
  INFO("the test needs $" << name);
  REQUIRE(path != nullptr);
  return path;
}

// Every record of the ledger, in seq order.
inline std::vector<Record> ledgerRecords(const Ledger& ledger) {
  std::vector<Record> out;
  REQUIRE(ledger
              .scanRecords(1, 0,
                           [&](const Record& r, const Digest&) {
                             out.push_back(r);
                             return true;
                           })
              .isOk());
  return out;
}

// The report after `seq` (0: after the last record).
inline replay::StateReport reportOf(const Ledger& ledger, std::uint64_t seq = 0) {
  replay::Replayer r(ledger);
  replay::ClusterState s = r.foldTo(seq == 0 ? ledger.lastSeq() : seq);
  return replay::buildReport(s);
}

inline const replay::WorkloadReport* findWorkload(const replay::StateReport& r,
                                                  const std::string& ns, const std::string& name) {
  for (const auto& w : r.workloads) {
    if (w.ns == ns && w.name == name) return &w;
  }
  return nullptr;
}

inline bool hasFinding(const replay::StateReport& r, const std::string& type,
                       const std::string& objectPart = "") {
  for (const auto& f : r.findings) {
    if (f.type == type && f.object.find(objectPart) != std::string::npos) return true;
  }
  return false;
}

inline std::string q(const replay::ResourceList& list, const std::string& name) {
  auto it = list.find(name);
  return it == list.end() ? "<absent>" : it->second.toString();
}

// The object index as per-record keys, sorted: each record entry stands for
// the keys of the seqs it lists (ledger/object_index.h), which does not
// depend on how the records were batched. `entries` counts the stored
// entries.
inline std::vector<std::string> objectIndexAsRecordKeys(const Ledger& ledger,
                                                        std::size_t* entries = nullptr) {
  std::vector<std::string> keys;
  std::size_t stored = 0;
  std::vector<std::uint64_t> seqs;
  REQUIRE(ledger
              .scanRaw(format::kObjectIndexFamily,
                       [&](std::string_view k, std::string_view v) {
                         ++stored;
                         std::string_view object;
                         std::uint64_t first = 0;
                         if (!parseRecordEntryKey(k, &object, &first)) {
                           CHECK(v.empty());
                           keys.emplace_back(k);
                           return;
                         }
                         seqs.clear();
                         REQUIRE(decodeRecordEntry(first, v, seqs));
                         for (const std::uint64_t seq : seqs)
                           keys.push_back(format::objectRecordKey(object, seq));
                       })
              .isOk());
  std::sort(keys.begin(), keys.end());
  if (entries != nullptr) *entries = stored;
  return keys;
}

// Damage on purpose. The seq of the last record whose identity has `kind`.
inline std::uint64_t lastSeqOfKind(const Ledger& ledger, const std::string& kind) {
  std::uint64_t found = 0;
  REQUIRE(ledger
              .scanProjections(1, 0,
                               [&](std::uint64_t seq, schema::ProjectedRecord::Reader r) {
                                 if (r.getIdentity().getKind() == kind) found = seq;
                                 return true;
                               })
              .isOk());
  REQUIRE(found != 0);
  return found;
}

// Replaces the stored projection of `seq` with itself less its last word, its
// one segment shortened to match: what was written first (the identity, the
// object's kind) still reads, so the record folds; what was written last
// points outside the message (tests/fuzz/ledger_bytes_fuzz.cpp found this).
// Rewrites the closed ledger at `path` as an earlier build left it: the
// column families `dropFamilies` gone, the meta keys `dropMetaKeys` deleted,
// and the format version `version`.
inline void makeEarlierFormat(const std::string& path, const std::string& version,
                              const std::vector<std::string>& dropFamilies,
                              const std::vector<std::string>& dropMetaKeys = {}) {
  rocksdb::DBOptions dbo;
  std::vector<std::string> names;
  REQUIRE(rocksdb::DB::ListColumnFamilies(dbo, path, &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const auto& n : names) descriptors.emplace_back(n, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  REQUIRE(rocksdb::DB::Open(dbo, path, descriptors, &handles, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (std::find(dropFamilies.begin(), dropFamilies.end(), names[i]) != dropFamilies.end()) {
      REQUIRE(db->DropColumnFamily(handles[i]).ok());
    }
    if (names[i] == format::kMetaFamily) {
      REQUIRE(db->Put(rocksdb::WriteOptions(), handles[i], std::string(format::kFormatKey), version)
                  .ok());
      for (const auto& key : dropMetaKeys) {
        REQUIRE(db->Delete(rocksdb::WriteOptions(), handles[i], key).ok());
      }
    }
  }
  for (auto* h : handles) REQUIRE(db->DestroyColumnFamilyHandle(h).ok());
  REQUIRE(db->Close().ok());
}

inline void cutLastWordOfProjection(Ledger& ledger, std::uint64_t seq) {
  std::string value;
  REQUIRE(ledger.getRaw(format::kProjectionFamily, format::seqKey(seq), &value).isOk());
  std::uint32_t extraSegments = 0, words = 0;
  std::memcpy(&extraSegments, value.data(), 4);
  std::memcpy(&words, value.data() + 4, 4);
  REQUIRE(extraSegments == 0);
  REQUIRE(value.size() == 8 + 8 * std::size_t{words});
  --words;
  std::memcpy(value.data() + 4, &words, 4);
  value.resize(value.size() - 8);
  REQUIRE(ledger.putRawForTesting(format::kProjectionFamily, format::seqKey(seq), value).isOk());
}

}  // namespace ledger::testing
