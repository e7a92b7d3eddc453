// The hash chain and the SHA-256 under it: known digests, and a hasher
// reused along the chain (as append and verify do) against fresh ones; the
// record encoder against Cap'n Proto's own flat array, byte for byte.
#include "ledger/record.h"

#include <capnp/message.h>
#include <capnp/serialize.h>

#include <catch2/catch.hpp>
#include <cctype>
#include <random>
#include <string>

#include "ledger/record_capnp.h"
#include "schema/log.capnp.h"

#include "ledger/sha256.h"

using namespace ledger;

TEST_CASE("SHA-256 gives the FIPS 180-2 digests", "[record][sha256]") {
  CHECK(toHex(Sha256::of("abc")) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(toHex(Sha256::of("")) ==
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // finish() resets the hasher: the same object hashes the next message afresh.
  Sha256 h;
  h.update("ab");
  h.update("c");
  CHECK(toHex(h.finish()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  h.update("abc");
  CHECK(toHex(h.finish()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("a hasher reused along the chain gives the chain fresh hashers give",
          "[record][sha256]") {
  Sha256 reused;
  Digest fresh{}, chained{};
  for (int i = 0; i < 200; ++i) {
    // Records of every size from empty to a few kilobytes, as the log holds.
    const std::string record(static_cast<std::size_t>(i * 37 % 5000),
                             static_cast<char>('a' + i % 26));
    fresh = chainHash(fresh, record);
    chained = chainHash(chained, record, reused);
    REQUIRE(fresh == chained);
  }
  // hash(seq) = SHA-256(previous ++ record), as format.h documents.
  const Digest previous = Sha256::of("previous");
  std::string joined(reinterpret_cast<const char*>(previous.data()), previous.size());
  joined += "record";
  CHECK(chainHash(previous, "record", reused) == Sha256::of(joined));
}

namespace {

// The LogRecord bytes as format 1 first wrote them: a message of its own
// with a 1024-word first segment, framed by capnp::messageToFlatArray.
std::string flatArrayRecord(const Record& r, std::string_view json) {
  capnp::MallocMessageBuilder message(1024);
  fillLogRecord(message.initRoot<schema::LogRecord>(), r, json);
  const auto words = capnp::messageToFlatArray(message);
  const auto bytes = words.asBytes();
  return std::string(reinterpret_cast<const char*>(bytes.begin()), bytes.size());
}

std::string joined(std::span<const std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out.append(p);
  return out;
}

}  // namespace

TEST_CASE("the record encoder gives Cap'n Proto's flat array, whatever came before", "[record]") {
  // Sizes around the first segment's end (8 KB) and far past it, in an order
  // where a small record follows a large one in the same encoder: what the
  // large one left in the reused first segment must not show.
  std::mt19937_64 rng(7);
  RecordEncoder encoder;
  Digest viaParts{}, viaString{};
  Sha256 hasher;
  std::size_t multiSegment = 0;
  for (int i = 0; i < 600; ++i) {
    Record r;
    r.seq = static_cast<std::uint64_t>(i + 1);
    r.type = static_cast<EventType>(i % 3);
    r.timeNs = static_cast<std::int64_t>(rng() % 1000000000000ULL) - 1000;
    r.identity = {i % 2 ? "kueue.x-k8s.io" : "",
                  "v1",
                  "Workload",
                  i % 5 ? "team-a" : "",
                  "job-" + std::to_string(i),
                  "uid-" + std::to_string(rng() % 100000),
                  std::to_string(rng() % 1000000)};
    const std::size_t size = i % 4 == 0   ? 8100 + rng() % 200
                             : i % 4 == 1 ? rng() % 64
                             : i % 4 == 2 ? rng() % 40000
                                          : 200000 + rng() % 1000;
    const std::string json(size, static_cast<char>('a' + i % 26));
    const std::string expected = flatArrayRecord(r, json);
    const auto parts = encoder.encode(r, json);
    if (parts.size() > 2) ++multiSegment;
    REQUIRE(joined(parts) == expected);
    REQUIRE(encodeRecord(r, json) == expected);
    viaParts = chainHash(viaParts, parts, hasher);
    viaString = chainHash(viaString, expected);
    REQUIRE(viaParts == viaString);
    Record back;
    REQUIRE(decodeRecord(expected, &back).isOk());
    r.objectJson = json;
    CHECK(back == r);
  }
  CHECK(multiSegment > 200);  // the second segment was exercised
}

TEST_CASE("a digest reads back from its 64 hex digits and from nothing else", "[fleet][sha256]") {
  const Digest d = Sha256::of("abc");
  REQUIRE(digestFromHex(toHex(d)) == d);
  std::string upper = toHex(d);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  CHECK(digestFromHex(upper) == d);
  CHECK_FALSE(digestFromHex(toHex(d).substr(1)));
  CHECK_FALSE(digestFromHex(toHex(d) + "0"));
  CHECK_FALSE(digestFromHex(std::string(64, 'g')));
  CHECK_FALSE(digestFromHex("0x" + toHex(d).substr(2)));
  std::string withColon = toHex(d);
  withColon[2] = ':';
  CHECK_FALSE(digestFromHex(withColon));
  std::string withNul = toHex(d);
  withNul[10] = '\0';
  CHECK_FALSE(digestFromHex(withNul));
}
