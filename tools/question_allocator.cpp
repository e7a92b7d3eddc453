// jemalloc's options for ledger-query, which starts, answers one question
// and exits (tools/meson.build, question_allocator_dep).
//
// A question touches tens of megabytes of fresh memory once: the blocks it
// decompresses, the objects of a moment, the device catalog, the report.
// On a virtual machine each page fault costs several microseconds, and page
// faults were the largest single cost of a question left after the work
// itself (docs/performance.md, "A question end to end"). What this file
// does, together, brings a `state --at T` on a 1M-record ledger from about
// 2,500 page faults to about 500:
//
// - Transparent huge pages for the heap and jemalloc's metadata, as for the
//   other answering programs (allocator_options.cpp): a fault maps 2 MiB.
// - One arena for every thread (narenas:1) and none apart for large
//   requests (oversize_threshold:0): the threads that read a checkpoint's
//   objects and hash the state draw on the same memory as the main thread
//   instead of each growing an arena of its own.
// - The arena's memory reserved at start in one piece (below). jemalloc
//   grows an arena by mappings of 2, 2.5, 3, 3.5, 4, 5 MiB..., and the
//   kernel places a mapping on a 2 MiB boundary only when its length is a
//   multiple of 2 MiB: in a mapping of 2.5 MiB at an odd address no huge
//   page fits, and each 4 KiB page faulted on its own.
//
// The reserve is address space, not memory: only the pages a question
// touches are backed. jemalloc reads malloc_conf before the first
// allocation; /etc/malloc.conf and MALLOC_CONF, read after it, override
// any option set here (jemalloc(3), "TUNING").

#include <cstddef>
#include <cstdlib>

// jemalloc looks the symbol up by this name (Debian builds it without a
// prefix), so it needs C linkage and external visibility.
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "thp:always,metadata_thp:always,narenas:1,oversize_threshold:0";
}

namespace {

// A multiple of 2 MiB, so that the kernel aligns the mapping; larger than
// a question's heap on the simulated clusters, whose questions do the same
// work at every ledger size.
constexpr std::size_t kHeapReserveBytes = std::size_t{64} << 20;

struct HeapReserve {
  HeapReserve() {
    // Freed at once: the extent stays in the arena (retained, not unmapped)
    // and every later allocation is carved from it. Volatile, so that the
    // compiler keeps the pair it would otherwise elide.
    void* volatile reserve = std::malloc(kHeapReserveBytes);
    std::free(reserve);
  }
};

const HeapReserve heapReserve;

}  // namespace
