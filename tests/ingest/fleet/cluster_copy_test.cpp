// The fleet consumer's check before commit (ingest/fleet/cluster_copy.h):
// a record joins a copy only when the ledger will store exactly its bytes
// at its seq with its chain hash.
#include "ingest/fleet/cluster_copy.h"

#include <catch2/catch.hpp>

#include <string>

using namespace ledger;
using namespace ledger::fleet;

namespace {

Record recordAt(std::uint64_t seq, std::int64_t timeNs) {
  Record r;
  r.seq = seq;
  r.type = EventType::kAdded;
  r.timeNs = timeNs;
  r.identity = {"", "v1", "Namespace", "", "ns-" + std::to_string(seq), "uid", "1"};
  r.objectJson = R"({"kind":"Namespace","metadata":{"name":"ns"}})";
  return r;
}

// A shipped record over `bytes` (kept by the caller), chained onto `previous`.
ShippedRecord shipped(const Record& r, const std::string& bytes, const Digest& previous) {
  ShippedRecord s;
  s.cluster = "a";
  s.seq = r.seq;
  s.timeNs = r.timeNs;
  s.record = r;
  s.bytes = bytes;
  s.chainHash = chainHash(previous, bytes);
  return s;
}

}  // namespace

TEST_CASE("a copy takes the next record only when the ledger would store it as shipped",
          "[fleet]") {
  ClusterCopy copy;
  copy.name = "a";
  RecordEncoder encoder;
  Sha256 hasher;
  const Record first = recordAt(1, 2000);
  const std::string firstBytes = encodeRecord(first);
  ShippedRecord one = shipped(first, firstBytes, Digest{});
  REQUIRE_FALSE(copy.checkNext(one, encoder, hasher));
  TakenRecord taken;
  taken.shipped = std::move(one);
  copy.accept(std::move(taken), {});
  CHECK(copy.appliedSeq == 1);
  CHECK(copy.pending.size() == 1);

  SECTION("a record that does not chain") {
    const Record next = recordAt(2, 3000);
    const std::string bytes = encodeRecord(next);
    ShippedRecord r = shipped(next, bytes, Digest{});  // chained onto the wrong hash
    const auto refusal = copy.checkNext(r, encoder, hasher);
    REQUIRE(refusal);
    CHECK(refusal->reason == RefusalReason::kChain);
  }
  SECTION("a record whose time goes backwards, though it chains") {
    const Record next = recordAt(2, 1000);
    const std::string bytes = encodeRecord(next);
    ShippedRecord r = shipped(next, bytes, copy.appliedHash);
    const auto refusal = copy.checkNext(r, encoder, hasher);
    REQUIRE(refusal);
    CHECK(refusal->reason == RefusalReason::kNotCanonical);
  }
  SECTION("bytes that decode but are not this build's encoding, though they chain") {
    const Record next = recordAt(2, 3000);
    const std::string bytes = encodeRecord(next) + std::string(8, '\0');
    ShippedRecord r = shipped(next, bytes, copy.appliedHash);
    const auto refusal = copy.checkNext(r, encoder, hasher);
    REQUIRE(refusal);
    CHECK(refusal->reason == RefusalReason::kNotCanonical);
  }
  SECTION("a repeat of the pending record is no refusal; another record there is") {
    const std::string again = encodeRecord(first);
    CHECK_FALSE(copy.checkRepeat(shipped(first, again, Digest{})));
    Record other = first;
    other.objectJson = R"({"kind":"Namespace","metadata":{"name":"forged"}})";
    const std::string otherBytes = encodeRecord(other);
    const auto refusal = copy.checkRepeat(shipped(other, otherBytes, Digest{}));
    REQUIRE(refusal);
    CHECK(refusal->reason == RefusalReason::kDiffers);
  }
  SECTION("the next record in order is taken") {
    const Record next = recordAt(2, 3000);
    const std::string bytes = encodeRecord(next);
    ShippedRecord r = shipped(next, bytes, copy.appliedHash);
    CHECK_FALSE(copy.checkNext(r, encoder, hasher));
  }
}
