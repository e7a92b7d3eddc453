// A long scan of the projection family with the reading on a second thread:
// RocksDB's iteration and block decompression on one core, the caller's fold
// on the other. A full replay spent about as long in each, so the two
// overlap instead of adding up.
//
// Contract: the same as Ledger::scanProjectionWords(from, to, fn) - records
// in seq order, `fn` returns false to stop, a kj::Exception from `fn` becomes
// a corruption Status naming the seq - but `fn` runs on the calling thread
// with words that stay valid only during the call. The helper thread is
// joined before this returns, also when `fn` throws anything else (which
// propagates). Needs a Ledger whose reads may run concurrently (they may).
#pragma once

#include <capnp/common.h>

#include <cstdint>
#include <functional>

#include "ledger/ledger.h"

namespace ledger::replay {

[[nodiscard]] Status scanProjectionAhead(
    const Ledger& ledger, std::uint64_t from, std::uint64_t to,
    const std::function<bool(std::uint64_t, kj::ArrayPtr<const capnp::word>)>& fn);

// scanProjectionAhead for a long range on a machine with a second core;
// Ledger::scanProjectionWords on one thread otherwise (a fold of a few
// thousand records is over before a helper thread pays for itself). The
// same contract either way.
[[nodiscard]] Status scanProjectionAheadIfLong(
    const Ledger& ledger, std::uint64_t from, std::uint64_t to,
    const std::function<bool(std::uint64_t, kj::ArrayPtr<const capnp::word>)>& fn);

// Records up to which a scan stays on one thread.
inline constexpr std::uint64_t kShortScanRecords = 4096;

}  // namespace ledger::replay
