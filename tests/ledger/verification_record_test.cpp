// The newest verification's record beside a ledger
// (ledger/verification_record.h): written and read back whole, absent as
// "never verified", a damaged one a clear Corruption naming the file (and
// replaced by the next record), and the rule that a passing chain check
// does not hide a failed full verification.
#include "ledger/verification_record.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "ledger/format.h"
#include "tests/test_support.h"

using namespace ledger;
using namespace ledger::testing;

namespace {

Verification full(bool ok, std::uint64_t upTo, std::int64_t timeNs) {
  Verification v;
  v.scope = VerificationScope::kFull;
  v.ok = ok;
  v.upToSeq = upTo;
  v.timeNs = timeNs;
  if (!ok) {
    v.failedSeq = 4;
    v.problem = "projection differs: \"9Gi\"";
  }
  return v;
}

Verification chain(bool ok, std::uint64_t upTo, std::int64_t timeNs) {
  Verification v = full(ok, upTo, timeNs);
  v.scope = VerificationScope::kChain;
  return v;
}

std::optional<Verification> readBack(const std::string& dir) {
  std::optional<Verification> out;
  const Status st = readVerification(dir, &out);
  INFO(st.toString());
  REQUIRE(st.isOk());
  return out;
}

}  // namespace

TEST_CASE("a verification record is written whole and read back", "[verification-record]") {
  TempDir dir;
  CHECK_FALSE(readBack(dir.path()).has_value());  // never verified
  const Verification passed = full(true, 12, 1'700'000'000'123'456'789);
  bool replaced = false;
  REQUIRE(recordVerification(dir.path(), passed, &replaced).isOk());
  CHECK(replaced);
  CHECK(readBack(dir.path()) == passed);
  // No temporary file is left beside it.
  CHECK_FALSE(std::filesystem::exists(dir.path(std::string(format::kVerificationFile) + ".tmp")));

  // Bytes that are not UTF-8 in the problem are replaced, not thrown over.
  Verification failed = full(false, 12, 1'700'000'001'000'000'000);
  failed.problem += " \xff";
  REQUIRE(recordVerification(dir.path(), failed).isOk());
  const auto back = readBack(dir.path());
  REQUIRE(back.has_value());
  CHECK_FALSE(back->ok);
  CHECK(back->failedSeq == 4);
  CHECK(back->problem.starts_with("projection differs: \"9Gi\" "));
}

TEST_CASE("a damaged verification record is a clear Corruption, replaced by the next",
          "[verification-record]") {
  TempDir dir;
  const std::string path = dir.path(format::kVerificationFile);
  const std::string good = encodeVerification(full(true, 3, 5));
  for (const std::string& text :
       {std::string(), good.substr(0, good.size() / 2), std::string("[1, 2]"),
        std::string(R"({"format": 2, "scope": "full"})"),
        std::string(R"({"format": 1, "scope": "half", "timeNs": 1, "upToSeq": 1, "ok": true,
                        "failedSeq": 0, "problem": ""})"),
        std::string(R"({"format": 1, "scope": "full", "timeNs": 1, "upToSeq": -1, "ok": true,
                        "failedSeq": 0, "problem": ""})"),
        std::string(R"({"format": 1, "scope": "full", "timeNs": 1, "upToSeq": 1, "ok": "yes",
                        "failedSeq": 0, "problem": ""})")}) {
    std::ofstream(path, std::ios::trunc) << text;
    std::optional<Verification> out;
    const Status st = readVerification(dir.path(), &out);
    INFO(text);
    CHECK(st.isCorruption());
    CHECK(st.message().find(path) != std::string::npos);
    CHECK(st.message().find("`ledger-replay verify` writes it anew") != std::string::npos);
  }
  REQUIRE(recordVerification(dir.path(), full(true, 3, 5)).isOk());
  CHECK(readBack(dir.path()) == full(true, 3, 5));
}

TEST_CASE("a passing chain check does not hide a failed full verification",
          "[verification-record]") {
  TempDir dir;
  REQUIRE(recordVerification(dir.path(), full(false, 10, 100)).isOk());
  bool replaced = true;
  REQUIRE(recordVerification(dir.path(), chain(true, 20, 200), &replaced).isOk());
  CHECK_FALSE(replaced);
  CHECK(readBack(dir.path()) == full(false, 10, 100));
  // A failed chain check is news either way; a passing full one clears it.
  REQUIRE(recordVerification(dir.path(), chain(false, 21, 300), &replaced).isOk());
  CHECK(replaced);
  CHECK(readBack(dir.path()) == chain(false, 21, 300));
  REQUIRE(recordVerification(dir.path(), full(true, 30, 400)).isOk());
  CHECK(readBack(dir.path()) == full(true, 30, 400));
  REQUIRE(recordVerification(dir.path(), chain(true, 40, 500), &replaced).isOk());
  CHECK(replaced);
  CHECK(readBack(dir.path()) == chain(true, 40, 500));
}

TEST_CASE("a directory that cannot be written is an error, not a silent loss",
          "[verification-record]") {
  TempDir dir;
  const Status st = recordVerification(dir.path("absent"), full(true, 1, 1));
  CHECK_FALSE(st.isOk());
  CHECK(st.message().find(dir.path("absent")) != std::string::npos);
}
