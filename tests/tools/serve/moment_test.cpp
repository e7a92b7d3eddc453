// resolveMoment (tools/serve/moment.h) on a cut ledger, and throwIfFailed
// (tools/serve/api_error.h): a moment before the cut is the ledger refusing
// the request, a 400 BadRequest naming the archive with the moment in RFC
// 3339; a moment from the cut's last record on resolves; a storage failure
// stays a 500; momentBeforeCut, which sends serve --archive to the archive.
#include "tools/serve/moment.h"
#include "ledger/archive.h"
#include "replay/fold/checkpoints.h"
#include "schema/k8s/rfc3339.h"
#include "tests/tamper_support.h"
#include "tools/serve/api_error.h"

using namespace ledger;
using namespace ledger::testing;

TEST_CASE("resolveMoment before a cut ledger's archive is a 400 naming it", "[serve][archive]") {
  TempDir dir;
  auto live = openLedger(dir.path("live"));
  ingestText(*live, demoStream(), "test", 3);
  const std::uint64_t seq = live->lastSeq() / 2;
  std::int64_t firstNs = 0, cutNs = 0;
  REQUIRE(live->timeOf(1, &firstNs).isOk());
  REQUIRE(live->timeOf(seq, &cutNs).isOk());
  REQUIRE(firstNs < cutNs);
  tamper::cutAfter(*live, seq, dir.path("archive"));

  const std::string before = formatRfc3339(cutNs - 1);
  try {
    serve::resolveMoment(before, *live, 0);
    FAIL("a moment before the cut resolved");
  } catch (const serve::ApiError& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(e.code() == 400);
    CHECK(e.reason() == "BadRequest");
    CHECK(message.find("the moment " + before + " is before the cut") != std::string::npos);
    CHECK(message.find("--archive " + dir.path("archive")) != std::string::npos);
  }
  const serve::Moment atCut = serve::resolveMoment(formatRfc3339(cutNs), *live, 0);
  CHECK(atCut.seq == seq);

  // What serve --archive answers from the archive: as the CLI's --archive.
  CHECK(serve::momentBeforeCut(before, *live));
  CHECK(serve::momentBeforeCut(formatRfc3339(firstNs), *live));
  CHECK_FALSE(serve::momentBeforeCut(formatRfc3339(cutNs), *live));
  CHECK(serve::momentBeforeCut("seq:" + std::to_string(seq - 1), *live));
  CHECK_FALSE(serve::momentBeforeCut("seq:" + std::to_string(seq), *live));
  for (const char* other : {"now", "seq:", "seq:x", "yesterday", ""}) {
    CHECK_FALSE(serve::momentBeforeCut(other, *live));
  }
  Ledger::Options readOnly;
  readOnly.readOnly = true;
  readOnly.createIfMissing = false;
  CHECK_FALSE(serve::momentBeforeCut(before, *openLedger(dir.path("archive"), readOnly)));
}

TEST_CASE("throwIfFailed: a refusal is a 400, a storage failure a 500", "[serve]") {
  CHECK_NOTHROW(serve::throwIfFailed(Status::ok()));
  try {
    serve::throwIfFailed(Status::invalidArgument("seq 3 is before the cut"));
    FAIL("no throw");
  } catch (const serve::ApiError& e) {
    CHECK(e.code() == 400);
    CHECK(std::string(e.what()) == "seq 3 is before the cut");
  }
  try {
    serve::throwIfFailed(Status::ioError("disk gone"));
    FAIL("no throw");
  } catch (const serve::ApiError& e) {
    CHECK(e.code() == 500);
    CHECK(e.reason() == "InternalError");
  }
}
