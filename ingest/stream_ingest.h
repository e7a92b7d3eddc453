// Reads one input stream (a file, stdin) into the ledger, as `ledger-ingest
// --from` does: ValueReader -> normalizeValue -> prepareEvent on a reader
// thread, Ingester::record on the calling thread, in input order.
//
// Why two threads: parsing, serialising and projecting an event needs no
// ledger, while recording needs the events before it; with the work split the
// writer commits one batch while the reader decodes the next (the machine the
// benchmarks run on has two cores). The reader runs at most a few chunks of
// values ahead, so memory stays bounded by the chunk size, not by the input.
//
// Ownership: borrows the stream and the Ingester for the call.
// Thread safety: the call owns its reader thread and joins it before
// returning or throwing; callbacks run on the calling thread.
// Errors: throws what Ingester::record throws (LedgerError), after stopping
// the reader; an exception on the reader thread (an I/O error the stream
// raises, bad_alloc) is rethrown here once every value read before it has
// been recorded. Pending records are left for the caller's Ingester::flush.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <istream>
#include <string>

#include "ingest/ingester.h"
#include "ingest/value_reader.h"

namespace ledger::ingest {

// A value (or one item of a List) that was not recorded, and where it was.
struct StreamRejection {
  std::uint64_t line = 0;    // 1-based line where the value starts
  std::uint64_t offset = 0;  // byte offset where the value starts
  std::string reason;
};

struct StreamOptions {
  ValueReader::Options reader;
  // Called for each rejection, in input order.
  std::function<void(const StreamRejection&)> onRejected;
  // Polled between values: once set (a signal handler may set it), no more
  // values are read; those already read are still recorded. A stream that
  // blocks waiting for input should watch it too and end (ledger-ingest's
  // stdin does).
  const std::atomic<bool>* stop = nullptr;
  // false: decode on the calling thread too (one thread, same results).
  bool pipelined = true;
  // How many input bytes the reader may decode ahead of the writer. A
  // commit of a 5000-record batch takes ~0.2 s, in which the reader decodes
  // ~10 MiB; much less and it stalls (256 KiB: the threads barely overlapped
  // on a 20k-event stream). Memory: about half this (what is kept of each
  // value) plus one chunk.
  std::uint64_t bytesAhead = 32 << 20;
};

struct StreamTotals {
  std::uint64_t values = 0;    // decoded values, rejected ones included
  std::uint64_t rejected = 0;  // rejected values and list items
  std::uint64_t bytes = 0;     // bytes of the stream consumed
  // The stop flag (StreamOptions::stop) was set when reading ended: input
  // may remain after `bytes`, the source's cursor. (A stream that waits for
  // input, such as a pipe, may end its read early once the flag is set.)
  bool interrupted = false;
};

// Records the stream's events under `source` and moves its cursor to the
// bytes consumed.
StreamTotals ingestStream(std::istream& in, const std::string& source, Ingester& ingester,
                          const StreamOptions& options);

}  // namespace ledger::ingest
