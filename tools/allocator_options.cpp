// jemalloc's options for every program (tools/meson.build, allocator_dep).
//
// jemalloc reads this symbol before the first allocation; /etc/malloc.conf
// and the MALLOC_CONF environment variable, read after it, override any
// option set here (jemalloc(3), "TUNING").
//
// Transparent huge pages: a question (`ledger-query state --at T`) touches
// tens of megabytes of fresh memory once - decompressed blocks, the objects
// of a moment, the report - and then exits. In 4 KiB pages that is about
// ten thousand page faults, each a trip into the kernel that a virtual
// machine makes dearer still; with the heap and jemalloc's own metadata in
// 2 MiB pages it is a few hundred. jemalloc marks its mappings with
// madvise(MADV_HUGEPAGE), so this works where the kernel's THP mode is
// "madvise" (and does nothing where it is "never"). What it costs is
// memory: a huge page is backed whole (docs/performance.md, "Opening a
// ledger").

// jemalloc looks the symbol up by this name (Debian builds it without a
// prefix), so it needs C linkage and external visibility.
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "thp:always,metadata_thp:always";
}
