// jemalloc's options for the programs that answer and exit: ledger-replay and
// ledger-bench (tools/meson.build, answering_allocator_dep; ledger-query has
// its own, question_allocator.cpp).
//
// jemalloc reads this symbol before the first allocation; /etc/malloc.conf
// and the MALLOC_CONF environment variable, read after it, override any
// option set here (jemalloc(3), "TUNING").
//
// Transparent huge pages: a question (`ledger-query state --at T`) touches
// tens of megabytes of fresh memory once - decompressed blocks, the objects
// of a moment, the report - and then exits. In 4 KiB pages that was about
// 7,600 page faults on a 1M-record ledger, each a trip into the kernel that a
// virtual machine makes dearer still; with the heap and jemalloc's own
// metadata in 2 MiB pages, about 2,400. A full replay runs faster too.
// jemalloc marks its mappings with madvise(MADV_HUGEPAGE), so this works
// where the kernel's THP mode is "madvise" or "always" (and does nothing
// where it is "never"). What it costs is memory: a huge page is backed
// whole, which a process that runs for days (ledger-ingest --watch,
// ledger-serve) keeps paying, so those allocate without it.

// jemalloc looks the symbol up by this name (Debian builds it without a
// prefix), so it needs C linkage and external visibility.
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "thp:always,metadata_thp:always";
}
