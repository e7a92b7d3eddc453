// The socket cpp-httplib's listening loop accepted last on this thread, for
// the per-address bound of ConnectionThreads (connection_threads.h).
//
// Why this way: Debian's cpp-httplib (0.11, a shared library) accepts a
// connection in its own loop and hands the task queue a closure that hides
// the socket, and offers no hook between the two; the bound needs the
// client's address when the connection arrives, before it sends anything (a
// client that never finishes its request is what it bounds). The program's
// own `accept` is the one the library's call binds to (an executable's
// definitions come first in ELF symbol lookup): it accepts as accept(2)
// does, with accept4(2), and notes the socket on the calling thread, whose
// next step in the library is TaskQueue::enqueue on that same thread.
//
// Thread safety: the note is per thread. Errors: accept's, unchanged.
#pragma once

namespace ledger::serve {

// The socket `accept` returned last on this thread, once (-1: none since
// the last call).
int takeAcceptedSocket();

}  // namespace ledger::serve
