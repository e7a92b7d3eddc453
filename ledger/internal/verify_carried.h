// What a cut ledger keeps of the records it moved to its archive
// (ledger_cut.cpp): the dedupe keys naming them (a relist must not record
// those versions again), the live entries of objects whose last record is
// archived (their next version is not a new object), and the object index's
// referrer keys they formed. Alone, verify takes these as it takes the link
// to the archive; given the archive (VerifyOptions::archive), each is
// checked against the archive's own families, which the archive's verify
// derives from its records, in both directions: nothing kept that the
// archive does not hold, nothing the archive holds that the cut dropped.
// Not part of the public interface; nothing outside ledger/ includes it.
//
// Borrows both ledgers and the options for its lifetime. One thread.
// Errors: problems are Findings; the Status is for failures to read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ledger/internal/verify_scan.h"

namespace ledger::verify_scan {

class CarriedEntries {
 public:
  // `live` is cut (archiveCut() set); `archive` holds its records up to the cut.
  CarriedEntries(const Ledger& live, const Ledger& archive, const VerifyOptions& options);

  // events, during the live ledger's scan of them: `key` names `seq`.
  [[nodiscard]] Status event(std::string_view key, std::uint64_t seq, Findings& findings);
  // events, during that scan: `key` names one of the live ledger's records.
  void laterEvent(std::string_view key);
  // After that scan: every key of the archive's events is kept, naming the
  // same record, or names a later record of the live ledger.
  [[nodiscard]] Status finishEvents(Findings& findings);

  // live, an entry for an object none of the live ledger's records describe.
  [[nodiscard]] Status liveEntry(std::string_view key, std::string_view value, Findings& findings);
  // After that scan: every object live in the archive that the live
  // ledger's records do not describe (`described`, by object key) is kept.
  [[nodiscard]] Status finishLive(const std::unordered_map<std::string, LiveExpectation>& described,
                                  Findings& findings);

  // object_index, a referrer key none of the live ledger's records form.
  [[nodiscard]] Status referrer(std::string_view key, Findings& findings);
  // After that scan: every referrer key of the archive's index is kept.
  [[nodiscard]] Status finishReferrers(Findings& findings);

 private:
  const Ledger& live_;
  const Ledger& archive_;
  const VerifyOptions& options_;
  std::vector<KeyedSeq> keptEvents_;        // (XXH3 of the key, the archived seq it names)
  std::vector<std::uint64_t> laterEvents_;  // XXH3 of the keys naming the live ledger's records
};

}  // namespace ledger::verify_scan
