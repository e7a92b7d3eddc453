// The stored wait data's values (replay/kueue/wait_rollups.h has the keys'
// meaning and who writes them): encoding an hour's admissions and a wait
// follower's state as schema/waits.capnp messages, and reading them back.
//
// Equal samples and equal states encode to equal bytes, so verify compares
// bytes. Every reader refuses a value of another kWaitRollupVersion or
// written from another origin than the ledger's (waitOrigin).
//
// Free functions on a borrowed Ledger; thread-safe as the Ledger's reads
// are. Throw ReplayError: corrupt when a value is missing, misplaced, does
// not decode, or is not usable; otherwise the ledger's read status.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <capnp/common.h>
#include <kj/common.h>

#include "ledger/ledger.h"
#include "replay/kueue/wait_follower.h"

namespace ledger::replay {

std::string encodeWaitHour(const std::vector<WaitSample>& samples, std::uint64_t originSeq);
std::string encodeWaitState(const WaitFollower& follower, std::uint64_t originSeq);

// The first record the follower of this ledger's stored data read: the
// ledger's first, or on a ledger cut with the follower's state carried to
// the cut (carryWaitState, a `v` value at the cut's seq) the origin that
// state names: the cut keeps the data written before it usable.
std::uint64_t waitOrigin(const Ledger& ledger);

// A stored value's version and the first record its follower read.
struct WaitValueHeader {
  std::uint32_t version = 0;
  std::uint64_t originSeq = 0;
  // This build reads it on a ledger of this waitOrigin.
  bool usable(std::uint64_t origin) const;
};
WaitValueHeader waitValueHeader(std::string_view key, kj::ArrayPtr<const capnp::word> payload);

// What a key names, for errors and verify: "wait samples of hour <time>"
// or "wait state after seq <n>".
std::string describeWaitKey(std::string_view key);

// Restores `follower` from the stored state nearest at or before `seq` (a
// seq before the ledger's first: the state carried to its cut, if any) and
// returns that state's seq; when none usable is stored there, leaves the
// follower as it is and returns the seq before the ledger's first.
std::uint64_t restoreWaitState(const Ledger& ledger, std::uint64_t seq, WaitFollower& follower);

// Stores the follower's state after record `seq` (from the nearest stored
// state before it and the records after that) as a `v` value, the state
// `ledger-replay archive` carries to the cut it is about to make at `seq`;
// Ledger::cutArchived then drops the states before it. Needs a writable
// ledger.
void carryWaitState(Ledger& ledger, std::uint64_t seq);

// The admissions of the stored hours [fromNs, toNs) (whole hours), in
// order, each with atNs its hour's start; throws (corrupt) unless every
// hour is stored and usable. Adds the hours read to *hoursRead when given.
void forEachStoredWaitHour(const Ledger& ledger, std::int64_t fromNs, std::int64_t toNs,
                           const WaitFollower::OnSample& onSample,
                           std::uint64_t* hoursRead = nullptr);

// The stored hours' keys [first, last] as the writer names them; empty
// strings when none are stored.
struct WaitHourKeys {
  std::string first, last;
};
WaitHourKeys storedWaitHourKeys(const Ledger& ledger);

}  // namespace ledger::replay
