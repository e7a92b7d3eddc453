// The families whose bytes dominate a ledger compress with a dictionary
// sampled from their own table files (ledger/ledger.cpp, familyOptions): the
// table files a writer leaves say so, and the records read back unchanged.
#include <rocksdb/db.h>
#include <rocksdb/table_properties.h>

#include <string>
#include <vector>

#include "ledger/format.h"
#include "ledger/ledger.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::testing;

namespace ledger_compression_test {

// Versions of one Pod differing in a field or two, as a watch reports them.
PendingRecord podVersion(int i) {
  PendingRecord p;
  p.type = EventType::kModified;
  p.timeNs = 1'000'000'000LL * (i + 1);
  const std::string name = "pod-" + std::to_string(i % 50);
  p.identity =
      ObjectIdentity{"", "v1", "Pod", "team-a", name, "uid-" + name, std::to_string(i + 1)};
  p.objectJson = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                 R"(","namespace":"team-a","uid":"uid-)" + name + R"(","resourceVersion":")" +
                 std::to_string(i + 1) + R"("},"spec":{"nodeName":"node-)" + std::to_string(i % 7) +
                 R"("},"status":{"phase":"Running"}})";
  p.dedupeKey = "k/" + std::to_string(i);
  return p;
}

// The compression options each table file of `family` was written with.
std::vector<std::string> tableCompressionOptions(const std::string& dir,
                                                 const std::string& family) {
  std::vector<std::string> names;
  REQUIRE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir, &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> descs;
  for (const auto& n : names) descs.emplace_back(n, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  REQUIRE(rocksdb::DB::OpenForReadOnly(rocksdb::DBOptions(), dir, descs, &handles, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] != family) continue;
    rocksdb::TablePropertiesCollection props;
    REQUIRE(db->GetPropertiesOfAllTables(handles[i], &props).ok());
    for (const auto& [file, p] : props) out.push_back(p->compression_options);
  }
  for (auto* h : handles) REQUIRE(db->DestroyColumnFamilyHandle(h).ok());
  return out;
}

}  // namespace ledger_compression_test

using namespace ledger_compression_test;

TEST_CASE("log, projection and checkpoint objects are written with a sampled dictionary",
          "[ledger][compression]") {
  TempDir dir;
  const std::string path = dir.path("l");
  std::vector<PendingRecord> batch;
  for (int i = 0; i < 2000; ++i) batch.push_back(podVersion(i));
  {
    auto ledger = openLedger(path);
    AppendResult r;
    REQUIRE(ledger->append(batch, {}, &r).isOk());
  }
  for (const char* family : {format::kLogFamily, format::kProjectionFamily}) {
    INFO(family);
    const auto options = tableCompressionOptions(path, family);
    REQUIRE_FALSE(options.empty());
    for (const auto& o : options) {
      CHECK(o.find("max_dict_bytes=65536") != std::string::npos);
      // Not trained: zstd's trainer runs on the writing thread and halved
      // ingest speed (docs/performance.md, "Bytes per record").
      CHECK(o.find("zstd_max_train_bytes=0") != std::string::npos);
    }
  }
  auto ledger = openLedger(path);
  REQUIRE(ledger->lastSeq() == batch.size());
  for (std::uint64_t seq = 1; seq <= batch.size(); seq += 97) {
    Record rec;
    REQUIRE(ledger->read(seq, &rec).isOk());
    CHECK(rec.objectJson == batch[seq - 1].objectJson);
  }
}
