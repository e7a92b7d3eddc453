// The hash chain and the SHA-256 under it: known digests, and a hasher
// reused along the chain (as append and verify do) against fresh ones.
#include "record.h"

#include <catch2/catch.hpp>
#include <string>

#include "sha256.h"

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
